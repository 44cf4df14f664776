// Command eval scores a checkpoint on a whole split of its corpus, in bits per byte.
//
//	go run ./cmd/eval -ckpt out/run -split test
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"lipformer/internal/cli"
	"lipformer/model"
	"lipformer/train"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
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
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ckpt := fs.String("ckpt", "", "run directory (its latest checkpoint) or checkpoint file")
	dataSpec := fs.String("data", "", "corpus (default: the one the checkpoint was trained on)")
	dataDir := fs.String("data-dir", "", "where corpora are found and downloaded")
	split := fs.String("split", "test", "split to score: valid or test")
	batch := fs.Int("batch", 16, "windows per evaluation batch")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *split != "valid" && *split != "test" {
		return fmt.Errorf("-split %q, want valid or test", *split)
	}
	path, err := cli.CheckpointPath(*ckpt)
	if err != nil {
		return err
	}
	m, ck, err := model.Load(path)
	if err != nil {
		return err
	}
	opt, err := train.TrainOptions(ck)
	if err != nil {
		return err
	}
	spec := opt.Data
	if *dataSpec != "" {
		spec = *dataSpec
	}
	corpus, err := cli.LoadCorpus(ctx, spec, opt.Split, *dataDir, cli.Logger(stderr))
	if err != nil {
		return err
	}
	if string(corpus.Vocab.Bytes()) != string(ck.Vocab) {
		return fmt.Errorf("corpus %s has another vocabulary than the checkpoint (%d and %d bytes)", corpus.Name, corpus.Vocab.Size(), len(ck.Vocab))
	}
	text := corpus.Test
	if *split == "valid" {
		text = corpus.Valid
	}
	tokens, err := corpus.Vocab.EncodeCompact(text)
	if err != nil {
		return err
	}
	p, err := m.NewProgram(model.Eval, *batch)
	if err != nil {
		return err
	}
	defer p.Close()
	loss, n, err := train.Evaluate(p, tokens)
	if err != nil {
		return err
	}
	step, _ := ck.MetaInt(train.MetaStep)
	res := result{Checkpoint: path, Corpus: corpus.Name, Split: *split, Step: step, Bytes: n, Loss: loss, BPC: train.BPC(loss)}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	fmt.Fprintf(stdout, "%s (step %d) on %s %s: %.4f bpc over %d bytes\n", path, step, corpus.Name, *split, res.BPC, n)
	return nil
}
