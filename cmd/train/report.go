package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"

	"lipformer/model"
	"lipformer/ngram"
	"lipformer/train"
)

// report prints the summary (as JSON, or as a few lines followed by a sample). Figures
// the run did not measure are said to be missing, not printed as numbers.
func report(w io.Writer, r *train.Run, sum *train.Summary, asJSON bool, sampleLen int) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	var speed string
	if sum.TokensPerS.Measured() {
		speed = fmt.Sprintf(" (%.0f tokens/s)", float64(sum.TokensPerS))
	}
	fmt.Fprintf(w, "%s on %s: %d steps in %.0f s%s, %d parameters\n", sum.Model.Arch, sum.Corpus, sum.Steps, sum.Seconds, speed, sum.Params)
	if sum.Interrupted && sum.Steps >= sum.Options.Steps {
		fmt.Fprintf(w, "interrupted during the final evaluation, after all %d steps: no final scores; -resume %s computes them\n", sum.Steps, r.Out)
		return nil
	}
	if sum.Interrupted {
		fmt.Fprintf(w, "interrupted: resume with -resume %s\n", r.Out)
		return nil
	}
	same := r.Corpus != nil && r.Corpus.ValidIsTest()
	switch {
	case sum.FinalValBPC.Measured() && sum.TestBPC.Measured():
		finalScores(w, sum, same)
		if sum.BestStep >= 0 {
			fmt.Fprintf(w, "%s: step %d, the best periodic validation (%s)\n", train.BestFile, sum.BestStep, periodic(r, sum))
		}
	case sum.BestStep >= 0 && sum.BestValBPC.Measured():
		why := "no whole-split score"
		if sum.NonFinite {
			why = "stopped at a non-finite value: no whole-split score"
		}
		fmt.Fprintf(w, "val bpc %.4f at step %d, the best periodic validation (%s); %s\n", float64(sum.BestValBPC), sum.BestStep, periodic(r, sum), why)
	case sum.NonFinite:
		fmt.Fprintln(w, "stopped at a non-finite value: no final val or test bpc")
	default:
		fmt.Fprintln(w, "no final val or test bpc")
	}
	if c := sum.Certificate; c != nil {
		fmt.Fprintf(w, "certified Lipschitz bound of the network (N = %d): %.4g (inf-norm), %.4g (2-norm), %.4g (token norm); certified logit range %.4g (%s %.4g) and radius %.4g (eval -logit-radius: what it allows)\n", c.N, float64(c.Inf), float64(c.Two), float64(c.Tok2), float64(c.LogitRange), c.Diameter(), c.TokenDiameter, float64(c.LogitRadius))
	}
	st := sum.Stability
	fmt.Fprintf(w, "stability: %d loss spikes, max gradient norm %.3g at step %d, diverged %t\n", st.LossSpikes, st.MaxGradNorm, st.MaxGradNormStep, st.Diverged)
	if sampleLen == 0 || sum.NonFinite {
		return nil
	}
	text, err := sample(r, sampleLen)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "sample:\n%s\n", text)
	fmt.Fprintf(w, "wrote %s/: %s (a JSON row per step and validation), %s (latest), %s (best validation), %s\n",
		r.Out, train.MetricsFile, train.LatestFile, train.BestFile, train.SummaryFile)
	fmt.Fprintf(w, "next: go run ./cmd/sample -ckpt %[1]s, go run ./cmd/eval -ckpt %[1]s -ngram 5, go run ./cmd/plot -runs %[1]s -out curves.png\n", r.Out)
	return nil
}

// finalScores prints the final weights' scores of the whole validation and test splits,
// the test split's n-gram baselines and the accuracies; when same (the corpus has no
// separate test part) it says so once and prints each figure once.
func finalScores(w io.Writer, sum *train.Summary, same bool) {
	if same {
		fmt.Fprintf(w, "val bpc %.4f, whole validation split (%d bytes); %s has no separate test split: the test scores are these\n",
			float64(sum.FinalValBPC), sum.ValBytes, sum.Corpus)
	} else {
		fmt.Fprintf(w, "val bpc %.4f, whole validation split (%d bytes); test bpc %.4f, whole test split (%d bytes)\n",
			float64(sum.FinalValBPC), sum.ValBytes, float64(sum.TestBPC), sum.TestBytes)
	}
	if len(sum.Baselines) > 0 {
		fmt.Fprintf(w, "n-gram baselines of the test split: %s\n", ngram.Format(sum.Baselines))
	}
	switch {
	case !sum.FinalValAcc.Measured() || !sum.TestAcc.Measured():
	case same:
		fmt.Fprintf(w, "next-byte accuracy: %.4f\n", float64(sum.FinalValAcc))
	default:
		fmt.Fprintf(w, "next-byte accuracy: val %.4f, test %.4f\n", float64(sum.FinalValAcc), float64(sum.TestAcc))
	}
}

// periodic describes the bytes each periodic validation scored: the whole validation
// split, or its first -eval-bytes.
func periodic(r *train.Run, sum *train.Summary) string {
	n := sum.Options.EvalBytes
	whole := n == 0 || (r.Corpus != nil && n >= len(r.Corpus.Valid))
	if whole {
		return "whole validation split"
	}
	return fmt.Sprintf("periodic subset: the first %d bytes of the validation split", n)
}

// sample draws n bytes from the final model, prompted with the first bytes of the test
// split (at most 16 and the context), at temperature 0.8 and top-k 40, window shift.
func sample(r *train.Run, n int) (string, error) {
	d, err := r.Model.NewDecoder()
	if err != nil {
		return "", err
	}
	prompt, err := r.Corpus.Vocab.Encode(r.Corpus.Test[:min(16, r.Model.Cfg.Context, len(r.Corpus.Test))])
	if err != nil {
		return "", err
	}
	s := model.Sampling{Temperature: 0.8, TopK: 40, Window: model.Shift}
	ids, err := model.Generate(d, prompt, n, s, rand.New(rand.NewPCG(r.Opt.Seed, 1)))
	if err != nil {
		return "", err
	}
	text, err := r.Corpus.Vocab.Decode(append(prompt, ids...))
	return string(text), err
}
