// Command sweep trains a grid of runs — architectures × depths × norm placements × seeds —
// with shared settings, one after another, each into OUT/<arch>-L<depth>-<norm>-s<seed>/,
// and tabulates their outcome in OUT/sweep.csv and OUT/sweep.md: final, best and test bpc
// and the stability figures of docs/math.md, "The language model". A run that reaches a non-finite loss is
// recorded as diverged and the sweep goes on.
//
// The sweep is resumable: running the same command again skips finished runs (summary.json
// present and not interrupted) and resumes interrupted ones from their checkpoint. SIGINT
// (Ctrl-C) stops the run in progress with a checkpoint, writes the tables and exits with
// status 130; a second SIGINT exits at once. The shared settings take cmd/train's flags,
// and -config FILE reads them from a configs/*.toml file as cmd/train does (its arch,
// layers, norm and seed become one-value -archs, -depths, -norms and -seeds).
//
//	go run ./cmd/sweep -dry-run -archs dp,l2,contractive-l2 -depths 2,6,10,14,18
//	go run ./cmd/sweep -archs dp,l2,contractive-l2 -depths 2,6,10,14,18 -schedule constant -warmup 0 -steps 2000 -out out/stability
//	go run ./cmd/sweep -config configs/shakespeare.toml -data-dir DATA -archs dp,contractive-l2 -seeds 1,2 -out out/shk
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"lipformer/cmd/internal/trainflags"
	"lipformer/internal/cli"
	"lipformer/model"
	"lipformer/spec"
	"lipformer/sweep"
	"lipformer/train"
)

// errInterrupted is returned when a signal stopped the sweep.
var errInterrupted = errors.New("interrupted: run the same command again to resume")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "sweep:", err)
		if errors.Is(err, errInterrupted) {
			os.Exit(130)
		}
		os.Exit(1)
	}
}

// options are the sweep's own flags.
type options struct {
	grid    sweep.Grid
	out     string
	dataDir string
	dryRun  bool
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, opt, o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	specs := o.grid.Specs(cfg, opt)
	for _, s := range specs {
		check := s.Cfg.BeforeCorpus()
		if err := check.Validate(); err != nil {
			return fmt.Errorf("run %s: %w", s.Name(), err)
		}
		need, err := train.EstimateMemory(check, s.Opt, 1, 0) // before a corpus is read or downloaded
		if err != nil {
			return fmt.Errorf("run %s: %w", s.Name(), err)
		}
		if err := cli.CheckMemory("training", need); err != nil {
			return fmt.Errorf("run %s: %w", s.Name(), err)
		}
		d, err := train.OpenRun(s.Dir(o.out))
		if err != nil {
			return err
		}
		if err := sweep.CheckSummary(d, s); err != nil {
			return err
		}
	}
	if o.dryRun {
		return dryRun(stdout, o.out, specs)
	}
	log := cli.Logger(stderr)
	corpus, err := cli.LoadCorpus(ctx, opt.Data, opt.Split, o.dataDir, log)
	if err != nil {
		return err
	}
	sw := &sweep.Runner{Out: o.out, Corpus: corpus, Log: log, Progress: cli.Progress(os.Stderr)}
	rows := make([]sweep.Row, len(specs))
	for i, s := range specs {
		if rows[i], err = sweep.ReadRow(o.out, s); err != nil {
			return err
		}
	}
	for i, s := range specs {
		if ctx.Err() != nil {
			break
		}
		log.Info("sweep", "run", fmt.Sprintf("%d/%d", i+1, len(specs)), "name", s.Name())
		sum, trainErr := sw.Run(ctx, s)
		switch {
		case errors.Is(trainErr, train.ErrNonFinite) && sum != nil:
			log.Warn("diverged: recorded, the sweep goes on", "run", s.Name(), "error", trainErr)
		case trainErr != nil:
			if err := sweep.WriteTables(o.out, rows); err != nil {
				log.Error("writing the tables", "error", err)
			}
			return fmt.Errorf("run %s: %w", s.Name(), trainErr)
		}
		if rows[i], err = sweep.ReadRow(o.out, s); err != nil {
			return err
		}
		if err := sweep.WriteTables(o.out, rows); err != nil {
			return err
		}
	}
	if err := sweep.WriteTables(o.out, rows); err != nil {
		return err
	}
	if err := sweep.WriteMarkdown(stdout, rows); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\ntables: %s, %s\n", filepath.Join(o.out, sweep.CSVFile), filepath.Join(o.out, sweep.MarkdownFile))
	if ctx.Err() != nil {
		return errInterrupted
	}
	return nil
}

// gridKeys returns the settings of a -config file (cmd/train's flag names) that the sweep
// takes as a grid of one value: a config's arch, layers, norm and seed set -archs,
// -depths, -norms and -seeds, which the command line overrides.
func gridKeys() map[string]string {
	return map[string]string{"arch": "archs", "layers": "depths", "norm": "norms", "seed": "seeds"}
}

// parseFlags reads the shared settings (cmd/train's flags) and the sweep's own.
func parseFlags(args []string, stderr io.Writer) (model.Config, train.Options, options, error) {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, opt := model.Default(), train.DefaultOptions()
	opt.Steps, opt.EvalEvery = 500, 100
	var o options
	archs := fs.String("archs", "dp,l2,contractive-l2", "comma-separated architectures: "+spec.ArchNames())
	depths := fs.String("depths", "2,4,8", "comma-separated numbers of blocks")
	norms := fs.String("norms", cfg.Norm.String(), "comma-separated norm placements: pre, post, none, ball")
	seeds := fs.String("seeds", "1", "comma-separated seeds of initialisation, batches and dropout")
	fs.StringVar(&o.out, "out", "out/sweep", "output directory: the tables, and one directory per run")
	fs.BoolVar(&o.dryRun, "dry-run", false, "list the runs and what would be done with each, and stop")
	dataDir := trainflags.Add(fs, &cfg, &opt, "arch", "layers", "norm", "seed")
	trainflags.AddConfig(fs)
	if err := trainflags.ApplyConfigAs(fs, args, gridKeys()); err != nil {
		return cfg, opt, o, err
	}
	if err := cli.Parse(fs, args); err != nil {
		return cfg, opt, o, err
	}
	o.dataDir = *dataDir
	trainflags.Finish(fs, &opt)
	if err := opt.Validate(); err != nil {
		return cfg, opt, o, err
	}
	var err error
	o.grid, err = parseGrid(*archs, *depths, *norms, *seeds)
	o.grid.Recipe = trainflags.Recipe(fs)
	return cfg, opt, o, err
}

// dryRun prints each run's directory and what the sweep would do with it.
func dryRun(w io.Writer, out string, specs []sweep.Spec) error {
	for _, s := range specs {
		dir := s.Dir(out)
		d, err := train.OpenRun(dir)
		if err != nil {
			return err
		}
		act, err := d.Action()
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%-8s %s\n", act, dir)
	}
	fmt.Fprintf(w, "%d runs\n", len(specs))
	return nil
}
