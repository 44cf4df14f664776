// Command sample generates text from a checkpoint, one byte at a time with the model's
// key/value cache (model.Decoder). The prompt may hold up to the model's context T bytes;
// beyond T generated positions, -window says how the window moves: shift (the default)
// keeps the last T/2 bytes and prefills them again once per T/2 bytes, so each byte sees
// T/2 to T-1 bytes before it at about 2 positions of work per byte; slide gives each byte
// exactly the T-1 before it (nanoGPT), a full forward pass over the window per byte.
//
//	go run ./cmd/sample -ckpt out/run -prompt "The " -n 500
//	go run ./cmd/sample -ckpt out/run -prompt "The " -n 500 -samples 8   # 8 samples, decoded in one batch
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"

	"lipformer/data"
	"lipformer/internal/cli"
	"lipformer/model"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "sample:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sample", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ckpt := fs.String("ckpt", "", "run directory (its latest checkpoint) or checkpoint file")
	n := fs.Int("n", 500, "bytes to generate")
	prompt := fs.String("prompt", "\n", "text to continue; every byte must be in the model's vocabulary")
	temperature := fs.Float64("temperature", 0.8, "softmax temperature (0: greedy)")
	topK := fs.Int("top-k", 40, "sample among the k most likely bytes (0: all)")
	seed := fs.Uint64("seed", 1, "random seed")
	samples := fs.Int("samples", 1, "independent samples of the prompt's continuation, decoded together in one batch (cheaper per byte than one at a time)")
	window := fs.String("window", string(model.Shift), "beyond the context T: shift (keep the last T/2 bytes, re-prefill them once per T/2 bytes; each byte sees T/2..T-1 before it) or slide (each byte sees the T-1 before it: a full forward pass per byte)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *n < 0 {
		return fmt.Errorf("-n %d, want >= 0", *n)
	}
	if *samples < 1 {
		return fmt.Errorf("-samples %d, want >= 1", *samples)
	}
	w, err := model.ParseWindow(*window)
	if err != nil {
		return fmt.Errorf("-window: %w", err)
	}
	path, err := cli.CheckpointPath(*ckpt)
	if err != nil {
		return err
	}
	m, ck, err := model.Load(path)
	if err != nil {
		return err
	}
	vocab, err := data.VocabFromBytes(ck.Vocab)
	if err != nil {
		return err
	}
	ids, err := vocab.Encode([]byte(*prompt))
	if err != nil {
		return fmt.Errorf("-prompt: %w", err)
	}
	if len(ids) > m.Cfg.Context {
		return fmt.Errorf("-prompt: %d bytes, want at most the model's context of %d", len(ids), m.Cfg.Context)
	}
	need, err := model.EstimateDecoderMemory(m.Cfg, *samples)
	if err != nil {
		return err
	}
	if err := cli.CheckMemory("sampling", need); err != nil {
		return err
	}
	d, err := m.NewBatchDecoder(*samples)
	if err != nil {
		return err
	}
	prompts := make([][]int, *samples)
	for i := range prompts {
		prompts[i] = ids
	}
	s := model.Sampling{Temperature: *temperature, TopK: *topK, Window: w}
	outs, err := model.GenerateBatch(d, prompts, *n, s, rand.New(rand.NewPCG(*seed, 0)))
	if err != nil {
		return err
	}
	for i, out := range outs {
		text, err := vocab.Decode(out)
		if err != nil {
			return err
		}
		if len(outs) > 1 {
			fmt.Fprintf(stdout, "--- sample %d of %d ---\n", i+1, len(outs))
		}
		fmt.Fprintf(stdout, "%s%s\n", *prompt, text)
	}
	return nil
}
