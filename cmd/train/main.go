// Command train trains a byte-level transformer language model and writes its metrics,
// checkpoints and summary to an output directory.
//
//	go run ./cmd/train                                  # a small certified model on the default corpus, in out/contractive-l2-opticks-DATE-TIME
//	go run ./cmd/train -arch dp -data shakespeare -steps 2000
//	go run ./cmd/train -config configs/shakespeare.toml -arch dp   # a named configuration
//	go run ./cmd/train -resume out/run1 -steps 4000     # continue a run
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"lipformer/cmd/internal/trainflags"
	"lipformer/data"
	"lipformer/dist"
	"lipformer/internal/cli"
	"lipformer/model"
	"lipformer/spec"
	"lipformer/train"
)

func main() {
	comm, err := dist.Init() // the replicas of mpirun -np N with -tags mpi, else this process
	if err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
	ctx, stop := notifyContext(context.Background())
	err = runOn(ctx, comm, os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, errorPrefix(comm)+":", err)
	}
	code := exitCode(ctx, err)
	stop()
	leave(comm, err, code)
	os.Exit(code)
}

// signalled is the cause of the cancellation of the context of run: the signal received.
type signalled struct{ sig os.Signal }

// Error names the signal.
func (s signalled) Error() string { return s.sig.String() + " received" }

// notifyContext returns a context that the first SIGINT or SIGTERM cancels with a
// signalled cause, and a function that stops catching them.
func notifyContext(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			cancel(signalled{s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

// exitCode is the exit status of train after run returned err: 128 plus the number of the
// signal that cancelled ctx (130 for SIGINT, 143 for SIGTERM, as shells report a process
// a signal stopped), else 1 on an error and 0 on success.
func exitCode(ctx context.Context, err error) int {
	var s signalled
	if errors.As(context.Cause(ctx), &s) {
		if n, ok := s.sig.(syscall.Signal); ok {
			return 128 + int(n)
		}
		return 1
	}
	if err != nil {
		return 1
	}
	return 0
}

// runOn is the command as replica comm.Rank() of the job comm (replicas.go).
func runOn(ctx context.Context, comm dist.Comm, args []string, stdout, stderr io.Writer) error {
	stdout, stderr = quiet(comm, stdout, stderr)
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, opt := model.Default(), train.DefaultOptions()
	cfg.Arch = spec.ContractiveL2        // certified attention that learns: clearly below the trigram in 1500 steps
	opt.Steps, opt.EvalEvery = 1500, 100 // about 2 minutes on 2 cores
	dataDir := trainflags.Add(fs, &cfg, &opt)
	out := fs.String("out", "", "output directory (default: a new directory in out/ named from the config or architecture, the corpus and the start time, e.g. out/contractive-l2-opticks-20261202-0735)")
	resume := fs.String("resume", "", "continue the run in this directory")
	asJSON := fs.Bool("json", false, "print the summary as JSON on stdout")
	sampleLen := fs.Int("sample", 300, "bytes to sample from the final model (0: none)")
	certify := fs.Bool("certify", false, "add the certified Lipschitz constants of the final weights to the summary (see cmd/lipschitz -ckpt); always for a model bounded end to end (-lip-k)")
	progressEvery := fs.Duration("progress-every", train.DefaultProgressEvery, "time between progress lines (step, loss, ms/step, tokens/s, elapsed, time left; evaluations' batches) when stderr is not a terminal, where a bar is drawn instead; 0: none")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file, for go tool pprof")
	trainflags.AddConfig(fs)
	if err := trainflags.ApplyConfig(fs, args); err != nil {
		return err
	}
	if err := cli.Parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // -h printed the usage, the whole answer
		}
		return err
	}
	trainflags.Finish(fs, &opt)
	if trainflags.Recipe(fs) {
		cfg = cfg.WithCertifiedRecipe()
	}
	// every flag is checked here, before a corpus or checkpoint is read
	switch {
	case *resume != "" && trainflags.Given(fs, "config"):
		return fmt.Errorf("-config with -resume: a run resumes with the settings stored in its checkpoint")
	case *progressEvery < 0:
		return fmt.Errorf("-progress-every %v, want >= 0 (0: no progress lines)", *progressEvery)
	case *sampleLen < 0:
		return fmt.Errorf("-sample %d, want >= 0", *sampleLen)
	case *asJSON && *sampleLen > 0 && trainflags.Given(fs, "sample"):
		return fmt.Errorf("-sample %d with -json: the JSON summary holds no sample (give -sample 0 or leave it out)", *sampleLen)
	}
	if *resume == "" {
		check := cfg.BeforeCorpus()
		if err := check.Validate(); err != nil {
			return err
		}
		if !trainflags.Given(fs, "out") {
			var err error
			if *out, err = train.NewRunDir("out", train.RunName(fs.Lookup("config").Value.String(), cfg.Arch.String(), opt.Data, time.Now())); err != nil {
				return err
			}
		}
		d, err := train.OpenRun(*out)
		if err != nil {
			return err
		}
		if err := d.CheckNew(); err != nil {
			return fmt.Errorf("-out %s: %w", *out, err)
		}
	}
	if err := opt.Validate(); err != nil {
		return err
	}
	if *cpuProfile != "" {
		stop, err := cli.StartCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	log := cli.Logger(stderr)
	r := &train.Run{Out: *out, Opt: opt}
	spec := opt.Data
	if *resume != "" {
		var err error
		if r, err = resumeRun(fs, *resume, *out, opt.Steps, log); err != nil {
			return err
		}
		if spec, err = resumeCorpus(fs, r, *resume, opt.Data, dataDir, log); err != nil {
			return err
		}
	}
	if *resume == "" {
		log.Info("run directory " + r.Out)
	}
	r.Log, r.Progress, r.Certify, r.ProgressEvery = log, cli.Progress(os.Stderr), *certify, *progressEvery
	if *progressEvery == 0 {
		r.ProgressEvery = -1 // Run's 0 is the default
	}
	replicate(r, comm)
	mcfg := cfg
	if r.Model != nil {
		mcfg = r.Model.Cfg
	}
	if _, err := checkMemory(mcfg, r.Opt, comm.Size(), 0); err != nil { // before a corpus is read or downloaded
		return err
	}
	corpus, err := cli.LoadCorpus(ctx, spec, r.Opt.Split, *dataDir, log)
	if err != nil {
		return err
	}
	mcfg.Vocab = corpus.Vocab.Size()
	mem, err := checkMemory(mcfg, r.Opt, comm.Size(), corpus.Size)
	if err != nil {
		return err
	}
	if r.Model == nil {
		cfg.Vocab = corpus.Vocab.Size()
		if r.Model, err = model.New(cfg, opt.Seed); err != nil {
			return err
		}
	}
	r.Corpus = corpus
	log.Info("training", "arch", r.Model.Cfg.Arch, "params", r.Model.NumParams(), "corpus", corpus.Name,
		"train_bytes", len(corpus.Train), "vocab", corpus.Vocab.Size(), "out", r.Out, "memory", mem.String())
	if err := comm.Barrier(); err != nil { // every replica has checked the directory before rank 0 takes it
		return err
	}
	sum, trainErr := r.Train(ctx)
	if sum == nil {
		return trainErr
	}
	if err := report(stdout, r, sum, *asJSON, *sampleLen); err != nil {
		return err
	}
	return trainErr
}

// resumeRun returns the run of the latest checkpoint of dir; only -steps, -data, -data-dir,
// -json, -sample, -certify and an -out naming dir itself may be given with -resume
// (train.FixedOnResume). It refuses a directory another process trains in, and a run that
// -steps (or, without it, the run's own number of steps) leaves nothing to train, but for
// one stopped during its final evaluation, which it resumes to compute it. An
// unreadable summary is warned of: the resume needs only the checkpoint and the metrics
// log, and writes a new summary.
func resumeRun(fs *flag.FlagSet, dir, out string, steps int, log *slog.Logger) (*train.Run, error) {
	if fixed := fixedFlags(fs); len(fixed) > 0 {
		return nil, fmt.Errorf("-resume continues a run with its saved settings: %s cannot change", strings.Join(fixed, ", "))
	}
	if trainflags.Given(fs, "out") && !sameDir(out, dir) {
		return nil, fmt.Errorf("-out %s with -resume %s: a resumed run continues in its own directory (leave -out out, or copy the run directory and resume the copy)", out, dir)
	}
	d, err := train.OpenRun(dir)
	if err != nil {
		return nil, err
	}
	if err := d.SummaryError(); err != nil {
		log.Warn("the summary file is unreadable: resuming from the checkpoint and the metrics log, and writing a new summary at the end", "error", err)
	}
	act, err := d.Action()
	if err != nil {
		return nil, fmt.Errorf("-resume %s: %w", dir, err)
	}
	r, at, err := d.Resume()
	if err != nil {
		return nil, fmt.Errorf("-resume %s: %w", dir, err)
	}
	switch {
	case trainflags.Given(fs, "steps") && steps <= at:
		return nil, fmt.Errorf("-steps %d: run %s is at step %d already; -steps must exceed %d to continue it", steps, dir, at, at)
	case trainflags.Given(fs, "steps"):
		r.Opt.Steps = steps
	case at == r.Opt.Steps && act == train.ActResume:
		log.Info("all steps are trained: computing the final evaluation the run was stopped in")
	case at >= r.Opt.Steps:
		return nil, fmt.Errorf("run %s finished at step %d; give -steps M > %d to continue it", dir, at, at)
	}
	return r, nil
}

// resumeCorpus returns the corpus spec that a resume of the run r from dir loads, and sets
// *dataDir to the run's data directory when -data-dir is not given. Without -data it is
// the stored spec, a relative file path looked for as train.ResolveCorpus does; -data
// (given) may name the file of a file corpus at another place, which becomes the run's,
// or the run's own named corpus. Whichever file is loaded, Run.Train refuses it unless it
// has the size and SHA-256 that the checkpoint stores.
func resumeCorpus(fs *flag.FlagSet, r *train.Run, dir, given string, dataDir *string, log *slog.Logger) (string, error) {
	ckpt := filepath.Join(dir, train.LatestFile)
	id, hasID, err := train.StoredCorpus(r.Resume.Meta)
	if err != nil {
		return "", fmt.Errorf("-resume %s: %s: %w", dir, ckpt, err)
	}
	if *dataDir == "" {
		*dataDir = id.DataDir
	}
	stored := r.Opt.Data
	if !trainflags.Given(fs, "data") {
		spec, err := train.ResolveCorpus(stored, id.Path, ckpt, log)
		if err != nil {
			return "", fmt.Errorf("-resume %s: %w: resume from the directory the run was started in, give the corpus file with -data, or copy it into the run directory", dir, err)
		}
		return spec, nil
	}
	switch {
	case data.IsNamed(stored) && canonical(given) != canonical(stored):
		return "", fmt.Errorf("-data %s with -resume %s: the run was trained on the built-in corpus %q, whose split a file does not reproduce: leave -data out (and give -data-dir if the corpus moved)", given, dir, canonical(stored))
	case !data.IsNamed(stored) && data.IsNamed(given):
		return "", fmt.Errorf("-data %s with -resume %s: the run was trained on the file %s; give the path of that file", given, dir, stored)
	case !data.IsNamed(stored) && !hasID:
		return "", fmt.Errorf("-data %s with -resume %s: checkpoint %s stores no size or hash of its corpus to check another file against (it was written before they were stored): leave -data out and resume where %s is found", given, dir, ckpt, stored)
	}
	r.Opt.Data = given
	return given, nil
}

// canonical is the name of the built-in corpus spec: "" is opticks.
func canonical(spec string) string {
	if spec == "" {
		return data.NameOpticks
	}
	return spec
}

// fixedFlags lists the flags given in fs that set a saved setting of the run other than
// those train.FixedOnResume lets change, in lexical order.
func fixedFlags(fs *flag.FlagSet) []string {
	saved := flag.NewFlagSet("saved", flag.ContinueOnError)
	trainflags.Add(saved, new(model.Config), new(train.Options))
	var fixed []string
	fs.Visit(func(f *flag.Flag) {
		if saved.Lookup(f.Name) != nil && train.FixedOnResume(f.Name) {
			fixed = append(fixed, "-"+f.Name)
		}
	})
	return fixed
}

// sameDir reports whether the paths a and b name the same directory: the same file when
// both exist, else the same absolute path.
func sameDir(a, b string) bool {
	if fa, err := os.Stat(a); err == nil {
		if fb, err := os.Stat(b); err == nil {
			return os.SameFile(fa, fb)
		}
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}

// checkMemory estimates the memory of a process of the training run of cfg and opt with
// `replicas` processes and a corpus of corpusBytes bytes, and refuses it when it exceeds
// the limit of the machine (cli.CheckMemory), before anything of that size is allocated.
func checkMemory(cfg model.Config, opt train.Options, replicas, corpusBytes int) (model.Memory, error) {
	need, err := train.EstimateMemory(cfg, opt, replicas, corpusBytes)
	if err != nil {
		return need, err
	}
	return need, cli.CheckMemory("training", need)
}
