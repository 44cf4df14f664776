// Command sample generates text from a checkpoint.
//
//	go run ./cmd/sample -ckpt out/run -prompt "The " -n 500
package main

import (
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
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
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
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 0 {
		return fmt.Errorf("-n %d, want >= 0", *n)
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
	p, err := m.NewProgram(model.Sample, 1)
	if err != nil {
		return err
	}
	defer p.Close()
	out, err := model.Generate(p, ids, *n, *temperature, *topK, rand.New(rand.NewPCG(*seed, 0)))
	if err != nil {
		return err
	}
	text, err := vocab.Decode(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s%s\n", *prompt, text)
	return nil
}
