// Command eval scores a checkpoint on a whole split of its corpus, in bits per byte.
// With -ablate attention it also scores the split without the attention sub-block of each
// layer in turn and without all of them, and prints the table. With -ngram N it also
// scores byte n-gram baselines (package ngram: interpolated Kneser-Ney models of orders
// 2, 3 and N, or 1 to N with -ngram-all) trained on the corpus's train split; with -data
// and no -ckpt it scores only those. With -radius R (and -radius-curve N) it also reports
// the fraction of the scored bytes whose top-1 byte is certified not to change under any
// perturbation of the input embeddings of token norm at most R, and the median certified
// radius (docs/math.md, "What the certificate buys"). With -logit-radius rho (and always
// for a model bounded end to end, at its certified logit radius) it reports the floor no
// model whose logits stay within rho of one point per position can score below, and
// bounded count models (docs/math.md, "What a logit ball allows").
//
//	go run ./cmd/eval -ckpt out/run -split test
//	go run ./cmd/eval -ckpt out/run -split valid -ablate attention
//	go run ./cmd/eval -ckpt out/run -ngram 5
//	go run ./cmd/eval -ckpt out/run -split valid -radius 0.01,0.1,1 -radius-curve 40 -json
//	go run ./cmd/eval -ckpt out/run -logit-radius 2,10
//	go run ./cmd/eval -data shakespeare -ngram 5 -ngram-all
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"text/tabwriter"
	"time"

	"lipformer/data"
	"lipformer/internal/cli"
	"lipformer/model"
	"lipformer/ngram"
	"lipformer/train"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "eval:", err)
		os.Exit(1)
	}
}

// result is the -json output.
type result struct {
	Checkpoint string  `json:"checkpoint"`
	Corpus     string  `json:"corpus"`
	Split      string  `json:"split"`
	Step       int     `json:"step"`
	Bytes      int     `json:"bytes"`
	Loss       float64 `json:"loss"`
	BPC        float64 `json:"bpc"`
	// Accuracy is the fraction of scored bytes whose top-1 prediction is right (not with
	// -ablate).
	Accuracy *float64 `json:"accuracy,omitempty"`
	// Stride is the advance of the evaluation windows: the context for consecutive
	// non-overlapping windows, less for overlapping ones (data.NewStridedEvalWindows).
	Stride int `json:"stride"`
	// Ablation is the table of -ablate attention: intact, each layer's attention removed,
	// all of it removed.
	Ablation []train.AblationRow `json:"ablation,omitempty"`
	// Baselines are the bpc of -ngram's n-gram models on the same split.
	Baselines []ngram.Result `json:"baselines,omitempty"`
	// Radius is what the certificate guarantees about the top-1 bytes (-radius,
	// -radius-curve).
	Radius *train.RadiusReport `json:"radius,omitempty"`
	// LogitBall is what each logit radius allows on the split: -logit-radius's, or the
	// certified one of a model bounded end to end.
	LogitBall []ballReport `json:"logit_ball,omitempty"`
}

// baselineResult is the -json output with -data and -ngram but no -ckpt.
type baselineResult struct {
	Corpus    string         `json:"corpus"`
	Split     string         `json:"split"`
	Bytes     int            `json:"bytes"`
	Baselines []ngram.Result `json:"baselines"`
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ckpt := fs.String("ckpt", "", "run directory (its latest checkpoint) or checkpoint file")
	dataSpec := fs.String("data", "", "corpus (default: the one the checkpoint was trained on; a warning says when the text differs from it)")
	dataDir := fs.String("data-dir", "", "where corpora are found and downloaded (default with -ckpt: the run's, else the user cache directory)")
	split := fs.String("split", "test", "split to score: valid or test")
	batch := fs.Int("batch", 16, "sequences of the context length (windows) per forward pass: a speed and memory setting")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	ablate := fs.String("ablate", "", "attention: also score the split without each layer's attention sub-block and without all of them, L+2 evaluations of the split for L layers in all")
	ngramN := fs.Int("ngram", 0, "also score n-gram baselines of orders 2, 3 and `N` (1 to 8), trained on the corpus's train split; 0: none. With -data and no -ckpt, only these (a file corpus then has the default split 0.9,0.05,0.05)")
	stride := fs.Int("stride", 0, "advance the evaluation windows of the context T by `S` bytes and score only the bytes no earlier window scored, each after at least T-S+1 bytes of context (1: the sliding window of published enwik8 numbers, at T times the cost); 0: S = T, consecutive windows")
	ngramAll := fs.Bool("ngram-all", false, "with -ngram N, score every order from 1 to N")
	radiusFlag := fs.String("radius", "", "comma-separated radii `R`: report the fraction of the scored bytes whose top-1 byte is certified not to change under any perturbation of the input embeddings of token norm at most R, and the median certified radius (a second pass over the split)")
	ballFlag := fs.String("logit-radius", "", "comma-separated logit radii `rho`: report the floor no model whose logits at a position stay within rho of one point can score below on the split, and bounded bigram and trigram count models (docs/math.md, \"What a logit ball allows\"); a model bounded end to end (-lip-k) reports its certified radius without this")
	boundedTop := fs.Int("bounded-order", 3, "with a logit radius: fit the bounded count models of orders 2 to `N` (2 to 8; past 3 a fit takes minutes on Tiny Shakespeare)")
	curve := fs.Int("radius-curve", 0, "also report the certified fraction at `N` radii spaced evenly in log R across the certified radii met, for plot -radius (0: none)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *split != "valid" && *split != "test" {
		return fmt.Errorf("-split %q, want valid or test", *split)
	}
	if *ngramN < 0 || *ngramN > ngram.MaxOrder {
		return fmt.Errorf("-ngram %d, want 0 (none) or an order from 1 to %d", *ngramN, ngram.MaxOrder)
	}
	if *ngramAll && *ngramN == 0 {
		return fmt.Errorf("-ngram-all needs -ngram N, the highest order")
	}
	orders := baselineOrders(*ngramN, *ngramAll)
	var radii []float64
	if *radiusFlag != "" {
		var err error
		if radii, err = cli.PositiveFloats("-radius", *radiusFlag); err != nil {
			return err
		}
	}
	var balls []float64
	if *ballFlag != "" {
		var err error
		if balls, err = cli.PositiveFloats("-logit-radius", *ballFlag); err != nil {
			return err
		}
	}
	if *curve < 0 {
		return fmt.Errorf("-radius-curve %d, want >= 0 (0: no curve)", *curve)
	}
	if *boundedTop < 2 || *boundedTop > ngram.MaxOrder {
		return fmt.Errorf("-bounded-order %d, want 2 to %d", *boundedTop, ngram.MaxOrder)
	}
	certify := radii != nil || *curve > 0
	if *ckpt == "" && *dataSpec != "" {
		if *ngramN == 0 {
			return fmt.Errorf("-data without -ckpt scores only the n-gram baselines: give -ngram N, or -ckpt")
		}
		if *ablate != "" {
			return fmt.Errorf("-ablate needs -ckpt")
		}
		if certify {
			return fmt.Errorf("-radius and -radius-curve need -ckpt")
		}
		if balls != nil {
			return fmt.Errorf("-logit-radius needs -ckpt: the floor groups the split by the model's window offsets")
		}
		return runBaselines(ctx, *dataSpec, *dataDir, *split, orders, *asJSON, stdout, cli.Logger(stderr))
	}
	if *ablate != "" && *ablate != "attention" {
		return fmt.Errorf("-ablate %q, want attention", *ablate)
	}
	if *stride < 0 {
		return fmt.Errorf("-stride %d, want >= 1 (or 0: the context)", *stride)
	}
	if *stride > 0 && *ablate != "" {
		return fmt.Errorf("-stride %d with -ablate: the ablation scores consecutive windows only", *stride)
	}
	if certify && *ablate != "" {
		return fmt.Errorf("-radius and -radius-curve with -ablate: the radii are those of the intact model; evaluate it apart")
	}
	path, err := cli.CheckpointPath(*ckpt)
	if err != nil {
		return err
	}
	m, ck, err := model.Load(path)
	if err != nil {
		return err
	}
	corpus, err := cli.SavedCorpus(ctx, *dataSpec, ck, path, *dataDir, cli.Logger(stderr))
	if err != nil {
		return err
	}
	text := corpus.Test
	if *split == "valid" {
		text = corpus.Valid
	}
	tokens, err := corpus.Vocab.EncodeCompact(text)
	if err != nil {
		return err
	}
	step, _ := ck.MetaInt(train.MetaStep)
	if *stride > m.Cfg.Context {
		return fmt.Errorf("-stride %d, want at most the model's context %d", *stride, m.Cfg.Context)
	}
	res := result{Checkpoint: path, Corpus: corpus.Name, Split: *split, Step: step, Stride: m.Cfg.Context}
	if *stride > 0 {
		res.Stride = *stride
	}
	need, err := model.EstimateMemory(m.Cfg, *batch, model.Eval)
	if err != nil {
		return fmt.Errorf("-batch %d: %w", *batch, err)
	}
	if err := cli.CheckMemory("evaluation", need.AddData(corpus.Size)); err != nil {
		return err
	}
	if *ablate == "" {
		var s train.Score
		progress := cli.Reporter(stderr, cli.Logger(stderr)).Evaluation(fmt.Sprintf("%s split, windows advanced by %d", *split, res.Stride))
		if s, err = evaluate(ctx, m, tokens, *batch, res.Stride, progress); err == nil {
			acc := s.Accuracy()
			res.Loss, res.Bytes, res.Accuracy = s.Nats, s.Scored, &acc
		}
	} else { // the table's first row is the intact model
		if res.Ablation, res.Bytes, err = train.AblateAttention(ctx, m, tokens, *batch); err == nil {
			res.Loss = res.Ablation[0].Loss
		}
	}
	if err != nil {
		return err
	}
	res.BPC = train.BPC(res.Loss)
	if certify {
		if res.Radius, err = certifiedRadii(m, tokens, *batch, res.Stride, radii, *curve, stderr); err != nil {
			return err
		}
	}
	if len(orders) > 0 {
		if res.Baselines, err = baselines(corpus, text, orders, cli.Logger(stderr)); err != nil {
			return err
		}
	}
	var lip, tokenRadius float64
	certified := -1
	if m.Cfg.LipK > 0 && *ablate == "" {
		cert, err := m.Certificate()
		if err != nil {
			return err
		}
		lip, tokenRadius = float64(cert.Tok2), cert.TokenRadius
		certified, balls = 0, append([]float64{float64(cert.LogitRadius)}, balls...)
	}
	if balls != nil {
		if res.LogitBall, err = logitBall(corpus.Train, text, tokens, corpus.Vocab.Bytes(), m.Cfg.Context, res.Stride, balls, certified, *boundedTop, cli.Logger(stderr)); err != nil {
			return fmt.Errorf("-logit-radius: %w", err)
		}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	acc := ""
	if res.Accuracy != nil {
		acc = fmt.Sprintf(", next-byte accuracy %.4f", *res.Accuracy)
	}
	fmt.Fprintf(stdout, "%s (step %d) on %s %s: %.4f bpc%s over %d bytes (windows of %d advanced by %d)\n", path, step, corpus.Name, *split, res.BPC, acc, res.Bytes, m.Cfg.Context, res.Stride)
	if res.Ablation != nil {
		printAblation(stdout, res.Ablation)
	}
	if res.Baselines != nil {
		printBaselines(stdout, corpus.Name, *split, res.Baselines, res.Bytes)
	}
	if res.Radius != nil {
		printRadius(stdout, res.Radius)
	}
	printLogitBall(stdout, corpus.Name, *split, res.LogitBall, lip, tokenRadius)
	return nil
}

// baselineOrders are the n-gram orders that -ngram n and -ngram-all select: none for
// n = 0, 1 to n with all, else 2, 3 and n, those of them up to n.
func baselineOrders(n int, all bool) []int {
	var orders []int
	for k := 1; k <= n; k++ {
		if all || k == n || k == 2 || k == 3 {
			orders = append(orders, k)
		}
	}
	return orders
}

// runBaselines scores only the n-gram baselines on a split of the corpus spec.
func runBaselines(ctx context.Context, spec, dataDir, split string, orders []int, asJSON bool, stdout io.Writer, log *slog.Logger) error {
	corpus, err := cli.LoadCorpus(ctx, spec, "", dataDir, log)
	if err != nil {
		return err
	}
	text := corpus.Test
	if split == "valid" {
		text = corpus.Valid
	}
	res := baselineResult{Corpus: corpus.Name, Split: split, Bytes: len(text) - 1}
	if res.Baselines, err = baselines(corpus, text, orders, log); err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	printBaselines(stdout, corpus.Name, split, res.Baselines, res.Bytes)
	return nil
}

// baselines trains an n-gram model of each order on the corpus's train split and scores
// text with each.
func baselines(corpus *data.Corpus, text []byte, orders []int, log *slog.Logger) ([]ngram.Result, error) {
	start := time.Now()
	res, err := ngram.Baselines(corpus.Train, text, corpus.Vocab.Bytes(), orders)
	if err != nil {
		return nil, fmt.Errorf("-ngram: %w", err)
	}
	log.Info("n-gram baselines", "orders", fmt.Sprint(orders), "train_bytes", len(corpus.Train), "scored_bytes", len(text)-1,
		"seconds", fmt.Sprintf("%.2f", time.Since(start).Seconds()))
	return res, nil
}

// printBaselines writes the line of the n-gram baselines.
func printBaselines(w io.Writer, corpus, split string, res []ngram.Result, scored int) {
	fmt.Fprintf(w, "n-gram baselines (Kneser-Ney, trained on the train split) on %s %s: %s bpc over %d bytes\n",
		corpus, split, ngram.Format(res), scored)
}

// evaluate is the score of the model on tokens, in windows advanced by stride, told to
// progress; a cancelled ctx stops it between batches.
func evaluate(ctx context.Context, m *model.Model, tokens []uint8, batch, stride int, progress train.EvalProgress) (train.Score, error) {
	p, err := m.NewProgram(model.Eval, batch)
	if err != nil {
		return train.Score{}, err
	}
	defer p.Close()
	return train.EvaluateScore(ctx, p, tokens, stride, progress)
}

// printAblation writes the ablation table: the attention removed, bpc, and the change
// from the intact model.
func printAblation(w io.Writer, rows []train.AblationRow) {
	fmt.Fprintln(w, "attention removed:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "layers\tbpc\tdelta\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%.4f\t%+.4f\t\n", r.Layers, r.BPC, r.Delta)
	}
	tw.Flush()
}
