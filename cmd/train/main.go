// Command train trains a byte-level transformer language model and writes its metrics,
// checkpoints and summary to an output directory.
//
//	go run ./cmd/train                                  # small L2 model on the default corpus
//	go run ./cmd/train -arch dp -data shakespeare -steps 2000
//	go run ./cmd/train -resume out/run1 -steps 4000     # continue a run
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"lipformer/cmd/internal/trainflags"
	"lipformer/internal/cli"
	"lipformer/model"
	"lipformer/ngram"
	"lipformer/train"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
}

// fixedOnResume lists the flags that define the model or the run and so
// cannot change when a run is resumed (-steps, -out and -json can).
var fixedOnResume = []string{"arch", "data", "data-dir", "split", "layers", "heads", "width", "hidden", "ctx", "batch",
	"lr", "min-lr", "warmup", "schedule", "beta1", "beta2", "weight-decay", "clip", "dropout", "norm", "lip-c",
	"l2-bound", "l2-temp", "l2-pos-bias", "dtype", "eval-every", "eval-bytes", "seed"}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, opt := model.Default(), train.DefaultOptions()
	opt.Steps, opt.EvalEvery = 500, 100
	dataDir := trainflags.Add(fs, &cfg, &opt)
	out := fs.String("out", "out/run", "output directory")
	resume := fs.String("resume", "", "continue the run in this directory")
	asJSON := fs.Bool("json", false, "print the summary as JSON on stdout")
	sampleLen := fs.Int("sample", 300, "bytes to sample from the final model (0: none)")
	certify := fs.Bool("certify", false, "add the certified Lipschitz constants of the final weights to the summary (see cmd/lipschitz -ckpt)")
	if err := cli.Parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // -h printed the usage, the whole answer
		}
		return err
	}
	trainflags.Finish(fs, &opt)
	// every flag is checked here, before a corpus or checkpoint is read
	switch {
	case *sampleLen < 0:
		return fmt.Errorf("-sample %d, want >= 0", *sampleLen)
	case *asJSON && *sampleLen > 0 && trainflags.Given(fs, "sample"):
		return fmt.Errorf("-sample %d with -json: the JSON summary holds no sample (give -sample 0 or leave it out)", *sampleLen)
	}
	if *resume == "" {
		check := cfg.WithCertifiedRecipe()
		check.Vocab = 256 // any vocabulary of bytes: the corpus is not loaded yet
		if err := check.Validate(); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(*out, train.MetricsFile)); err == nil {
			return fmt.Errorf("-out %s already holds a run (%s): resume it with -resume or choose another output directory", *out, train.MetricsFile)
		}
	}
	if err := opt.Validate(); err != nil {
		return err
	}
	log := cli.Logger(stderr)
	r := &train.Run{Out: *out, Log: log, Progress: cli.Progress(os.Stderr), Certify: *certify}
	if *resume != "" {
		if err := resumeRun(r, fs, *resume, opt.Steps); err != nil {
			return err
		}
		opt = r.Opt
	} else {
		r.Opt = opt
	}
	corpus, err := cli.LoadCorpus(ctx, opt.Data, opt.Split, *dataDir, log)
	if err != nil {
		return err
	}
	if r.Model == nil {
		cfg.Vocab = corpus.Vocab.Size()
		if r.Model, err = model.New(cfg.WithCertifiedRecipe(), opt.Seed); err != nil {
			return err
		}
	}
	r.Corpus = corpus
	log.Info("training", "arch", r.Model.Cfg.Arch, "params", r.Model.NumParams(), "corpus", corpus.Name,
		"train_bytes", len(corpus.Train), "vocab", corpus.Vocab.Size(), "out", r.Out)
	sum, trainErr := r.Train(ctx)
	if sum == nil {
		return trainErr
	}
	if err := report(stdout, r, sum, *asJSON, *sampleLen); err != nil {
		return err
	}
	return trainErr
}

// resumeRun loads the latest checkpoint of dir into r; only -steps, -out and -json may be
// given with -resume.
func resumeRun(r *train.Run, fs *flag.FlagSet, dir string, steps int) error {
	var fixed []string
	fs.Visit(func(f *flag.Flag) {
		for _, name := range fixedOnResume {
			if f.Name == name {
				fixed = append(fixed, "-"+name)
			}
		}
	})
	if len(fixed) > 0 {
		return fmt.Errorf("-resume continues a run with its saved settings: %s cannot change", strings.Join(fixed, ", "))
	}
	var err error
	if r.Model, r.Resume, err = model.Load(filepath.Join(dir, train.LatestFile)); err != nil {
		return err
	}
	if r.Opt, err = train.TrainOptions(r.Resume); err != nil {
		return err
	}
	if trainflags.Given(fs, "steps") {
		r.Opt.Steps = steps
	}
	r.Out = dir
	return nil
}

// report prints the summary (as JSON, or as a few lines followed by a sample).
func report(w io.Writer, r *train.Run, sum *train.Summary, asJSON bool, sampleLen int) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	fmt.Fprintf(w, "%s on %s: %d steps in %.0f s (%.0f tokens/s), %d parameters\n", sum.Model.Arch, sum.Corpus, sum.Steps, sum.Seconds, sum.TokensPerS, sum.Params)
	if sum.Interrupted {
		fmt.Fprintf(w, "interrupted: resume with -resume %s\n", r.Out)
		return nil
	}
	var baselines string
	if len(sum.Baselines) > 0 {
		baselines = "; " + ngram.Format(sum.Baselines)
	}
	fmt.Fprintf(w, "val bpc %.4f (%d bytes), test bpc %.4f (%d bytes%s); best periodic val bpc %.4f at step %d\n",
		sum.FinalValBPC, sum.ValBytes, sum.TestBPC, sum.TestBytes, baselines, sum.BestValBPC, sum.BestStep)
	if c := sum.Certificate; c != nil {
		fmt.Fprintf(w, "certified Lipschitz bound of the network (N = %d): %.4g (inf-norm), %.4g (2-norm)\n", c.N, float64(c.Inf), float64(c.Two))
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
