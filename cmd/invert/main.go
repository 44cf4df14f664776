// Command invert loads a checkpoint of an invertible architecture (invertible-l2, or the
// negative control invertible-dp) and inverts its residual sub-blocks by fixed-point
// iteration (docs/math.md, "Contraction and inversion"), each in its own norm (see package flow), on three kinds of
// input:
//   - data: the hidden states of the first -batch windows of a split of the checkpoint's
//     corpus; the whole stack is inverted from its output, the last sub-block first, and
//     each sub-block's reconstruction is compared with its true input;
//   - adversarial: the construction that makes dp unbounded (a zero last token among tokens
//     spread along one direction) at each -spread, put at every sub-block's input;
//   - random: N(0, spread^2) entries at each -spread, likewise.
//
// It runs in float64 whatever the checkpoint's dtype, on the function eval scores (the
// stored power-iteration vectors), or with -power-iters N > 0 on the function after N more
// steps of power iteration, whose certificate it reports beside the scored function's. An
// inversion fails when it does not
// converge within -max-iter iterations, or converges to another preimage (reconstruction
// error above -max-error). The exit status is 1 when a sub-block with a certified
// Lipschitz constant fails (a bug: every sub-block of invertible-l2, the MLPs of
// invertible-dp) and 0 when only the control's uncertified dp attention fails (the
// expected finding); the summary says which.
//
//	go run ./cmd/invert -ckpt out/run -spread 1,10,100 -plot out/run/invert.png
//	go run ./cmd/invert -ckpt out/run -json > out/run/invert.jsonl
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"

	"lipformer/flow"
	"lipformer/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "invert:", err)
		os.Exit(1)
	}
}

// config is the parsed command line.
type config struct {
	ckpt       string
	data       string
	dataDir    string
	split      string
	batch      int
	spreads    []float64
	tol        float64
	maxIter    int
	maxError   float64
	powerIters int
	seed       uint64
	json       bool
	plot       string
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("invert", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &config{}
	fs.StringVar(&c.ckpt, "ckpt", "", "run directory (its latest checkpoint) or checkpoint file of an invertible architecture")
	fs.StringVar(&c.data, "data", "", "corpus of the data windows (default: the one the checkpoint was trained on; a warning says when the text differs from it)")
	fs.StringVar(&c.dataDir, "data-dir", "", "where corpora are found and downloaded (default: the run's, else the user cache directory)")
	fs.StringVar(&c.split, "split", "valid", "split of the data windows: valid or test")
	fs.IntVar(&c.batch, "batch", 4, "sequences of the context length per inversion")
	spreads := fs.String("spread", "1,10,100", "comma-separated spreads of the adversarial and random inputs")
	fs.Float64Var(&c.tol, "tol", 1e-10, "stop when a step is at most this, in the sub-block's norm")
	fs.IntVar(&c.maxIter, "max-iter", 500, "fixed-point iterations at most")
	fs.Float64Var(&c.maxError, "max-error", 1e-6, "a converged inversion with a larger reconstruction error found another preimage: a failure")
	fs.IntVar(&c.powerIters, "power-iters", 0, "power-iteration steps on every spectrally normalised weight and token-norm attention bound before inverting (0: invert the function eval scores, with the stored vectors; more refines the estimates, and so inverts a slightly different function, whose certificate is reported beside the scored one's)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the adversarial and random inputs")
	fs.BoolVar(&c.json, "json", false, "write one JSON object per sub-block and input to stdout (the human table goes to stderr)")
	fs.StringVar(&c.plot, "plot", "", "plot the reconstruction error against the iteration to this .png, .svg or .pdf file")
	if err := cli.Parse(fs, args); err != nil {
		return nil, err
	}
	var err error
	if c.spreads, err = cli.PositiveFloats("-spread", *spreads); err != nil {
		return nil, err
	}
	return c, c.check()
}

// check validates the flags, naming the flag at fault.
func (c *config) check() error {
	switch {
	case c.split != "valid" && c.split != "test":
		return fmt.Errorf("-split %q, want valid or test", c.split)
	case c.batch < 1:
		return fmt.Errorf("-batch %d, want >= 1", c.batch)
	case !(c.tol > 0) || math.IsInf(c.tol, 1):
		return fmt.Errorf("-tol %v, want finite and > 0", c.tol)
	case c.maxIter < 1:
		return fmt.Errorf("-max-iter %d, want >= 1", c.maxIter)
	case !(c.maxError > 0) || math.IsInf(c.maxError, 1):
		return fmt.Errorf("-max-error %v, want finite and > 0", c.maxError)
	case c.powerIters < 0:
		return fmt.Errorf("-power-iters %d, want >= 0", c.powerIters)
	}
	if c.plot != "" {
		if _, err := flow.PlotFormat(c.plot); err != nil {
			return fmt.Errorf("-plot: %w", err)
		}
	}
	return nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	log := cli.Logger(stderr)
	e, err := newExperiment(ctx, c, log)
	if err != nil {
		return err
	}
	defer e.flow.Close()
	records, err := e.flow.Run(cli.Reporter(stderr, log).Task("inverting", "sub-blocks on data, adversarial and random inputs", "inversions"))
	if err != nil {
		return err
	}
	human := stdout
	if c.json {
		human = stderr
		if err := writeJSON(stdout, records); err != nil {
			return err
		}
	}
	writeTable(human, e, records)
	if c.plot != "" {
		if err := flow.WritePlot(c.plot, e.model.Cfg.Arch.String(), records); err != nil {
			return err
		}
	}
	return summarize(human, e, records)
}
