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
	best := "no finite periodic validation"
	if sum.BestStep >= 0 && sum.BestValBPC.Measured() {
		best = fmt.Sprintf("best periodic val bpc %.4f at step %d", float64(sum.BestValBPC), sum.BestStep)
	}
	switch {
	case sum.FinalValBPC.Measured() && sum.TestBPC.Measured():
		var baselines string
		if len(sum.Baselines) > 0 {
			baselines = "; " + ngram.Format(sum.Baselines)
		}
		fmt.Fprintf(w, "val bpc %.4f (%d bytes), test bpc %.4f (%d bytes%s); %s\n",
			float64(sum.FinalValBPC), sum.ValBytes, float64(sum.TestBPC), sum.TestBytes, baselines, best)
		if sum.FinalValAcc.Measured() && sum.TestAcc.Measured() {
			fmt.Fprintf(w, "next-byte accuracy: val %.4f, test %.4f\n", float64(sum.FinalValAcc), float64(sum.TestAcc))
		}
	case sum.NonFinite:
		fmt.Fprintf(w, "stopped at a non-finite value: no final val or test bpc; %s\n", best)
	default:
		fmt.Fprintf(w, "no final val or test bpc; %s\n", best)
	}
	if c := sum.Certificate; c != nil {
		fmt.Fprintf(w, "certified Lipschitz bound of the network (N = %d): %.4g (inf-norm), %.4g (2-norm), %.4g (token norm)\n", c.N, float64(c.Inf), float64(c.Two), float64(c.Tok2))
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
