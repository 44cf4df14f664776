// Command bench measures lipformer's speed with package bench: a full training step
// (forward, backward, global-norm clip, AdamW update: train.Stepper, the trainer's code
// path), a forward-only evaluation program and sampling (model.GenerateBatch with the
// decoder's key/value cache and the shift window, timed per generated token in the steady
// state, re-prefills included), for reference configurations (model.Presets) and
// architectures. Per measurement it reports the median time over the timed runs, tokens per
// second (sample: also ns per generated token), achieved GFLOP/s against the matrix-product
// FLOPs computed (model.CountFLOPs), heap bytes and objects allocated per run, and the live
// heap before and after the timed runs. With -torch it also runs bench/torch_ref.py
// (PyTorch, same weights, batch and optimizer settings) on every configuration, checks that
// both compute the same loss at step 0 and after one training step, and prints the ratio of
// Go's time to PyTorch's (bench/compare.sh does it for both BLAS builds). go test ./model
// -bench . times the same programs as benchmarks.
//
//	go run ./cmd/bench -reps 2 -warmup-reps 1 -configs P2         # a quick look
//	go run -tags openblas ./cmd/bench -json > go.jsonl          # the OpenBLAS build
//	go run ./cmd/bench -torch -archs dp,l2                      # against PyTorch
//	go run ./cmd/bench -configs P2 -soak 1000                   # live heap over 1000 training steps
//	go run ./cmd/bench -configs P1 -archs dp -modes train -cpuprofile cpu.prof  # then go tool pprof
//	go run ./cmd/bench -modes train,sample -sample-batch 16     # sampling 16 sequences in step
//	go run ./cmd/bench -modes train,sample -sample-window none  # sampling within the context
//	go run ./cmd/bench -pool out/bench/round-*/*.jsonl          # medians over runs (bench/compare.sh with ROUNDS)
//	go run ./cmd/bench -ckpt out/dp,out/inv -modes train -interleave  # trained models, alternated
//
// The machine should be idle: the timings are medians, but other load still shifts them.
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
	"slices"
	"strings"
	"syscall"

	"lipformer/bench"
	"lipformer/internal/cli"
	"lipformer/model"
	"lipformer/ops"
	"lipformer/spec"
	"lipformer/train"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// options are the parsed flags.
type options struct {
	plan    bench.Plan
	json    bool
	torch   bool
	runner  bench.Torch
	keep    string   // directory for the checkpoints given to PyTorch, or "" for a temporary one
	out     string   // file that receives the JSON records too, or ""
	soak    int      // training steps of a soak (bench.Plan.Soak) instead of the timed modes, or 0
	cpuProf string   // file that receives a CPU profile of the Go measurements, or ""
	trace   string   // file that receives an execution trace of the Go measurements, or ""
	pool    []string // JSONL files to pool instead of measuring (bench.Pool), or nil
	ckpts   []string // run directories or checkpoint files to time instead of the presets, or nil
	data    string   // with ckpts: the corpus of their batches, or "" for the one each stores
	dataDir string   // with ckpts: where named corpora are looked for, or "" for the stored one
}

// parseFlags parses and validates the command line.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var names []string
	for _, p := range model.Presets() {
		names = append(names, fmt.Sprintf("%s (%s)", p.Name, p.About))
	}
	configs := fs.String("configs", "P1,P2,P3", "reference configurations: "+strings.Join(names, "; "))
	archs := fs.String("archs", "dp,l2,invertible-l2", "architectures: "+spec.ArchNames())
	modes := fs.String("modes", "train,eval,sample", "what to time: train (a training step), eval (a forward-only batch), sample (generated tokens: KV cache, window shift)")
	var o options
	fs.IntVar(&o.plan.Set.Steps, "reps", 10, "timed repetitions per measurement (the median is reported)")
	fs.IntVar(&o.plan.Set.Warmup, "warmup-reps", 2, "untimed repetitions before the timed ones")
	fs.Uint64Var(&o.plan.Set.Seed, "seed", 1, "seed of the initial weights and the batch")
	fs.StringVar(&o.plan.Set.SampleWindow, "sample-window", string(model.Shift), "what the sample mode times: shift (the steady state beyond the context: re-prefills of T/2 bytes included) or none (generation within the context, from a 1-byte prompt to T bytes)")
	fs.IntVar(&o.plan.Set.SampleBatch, "sample-batch", 1, "sequences the sample mode decodes in step (model.GenerateBatch); its time is per generated token of all of them")
	fs.TextVar(&o.plan.Set.Dtype, "dtype", spec.Float32, "float32 or float64")
	fs.Float64Var(&o.plan.Set.Muon, "muon", 0, "train the blocks' matrices with Muon at `s` times the learning rate (train -muon), in Go and in PyTorch; measurements named arch+muon (0: AdamW for all)")
	fs.IntVar(&o.plan.Set.PowerIters, "power-iters", train.DefaultOptions().PowerIters, "power-iteration steps that refresh the spectral normalisations and token-norm bounds before each training step (train -power-iters), in Go and in PyTorch")
	fs.IntVar(&o.plan.Set.Mix, "mix", 0, "give every architecture a mixing sub-block of `k` taps in each block (train -mix), in Go and in PyTorch; measurements named arch+mixK (0: none)")
	fs.IntVar(&o.plan.Set.MLPBlocks, "mlp-blocks", 0, "give the invertible architectures `n` MLP sub-blocks per block sharing the preset's MLP width (train -mlp-blocks), in Go and in PyTorch; measurements named arch+mlpN (0: one, or the invertible-l2 recipe's 8)")
	fs.StringVar(&o.plan.Set.Activation, "activation", "", "the invertible architectures' MLP activation (train -activation): elu or maxmin, in Go and in PyTorch; measurements named arch+maxmin (default elu)")
	fs.Float64Var(&o.plan.Set.LipK, "lip-k", 0, "with -recipe, bound invertible-l2 end to end by `K` (train -lip-k: a final ball norm and a spectrally normalised head), in Go and in PyTorch; measurements named arch+recipe+kK (0: per-block bounds only)")
	fs.Float64Var(&o.plan.Set.EmbedRadius, "embed-radius", 0, "with -lip-k, hold the token table in the ball of radius `r` (train -embed-radius); measurements named ...+rR (0: free embeddings)")
	fs.IntVar(&o.plan.Set.TokenBytes, "token-bytes", 0, "give every architecture tokens of `n` bytes (train -token-bytes: a token table row per byte and the n - 1 before it, an untied head), in Go and in PyTorch; measurements named arch+tkN (0 or 1: byte tokens)")
	fs.BoolVar(&o.plan.Set.Ball, "ball", false, "put a ball norm before every branch of every architecture (train -norm ball), in Go and in PyTorch; measurements named arch+ball (invertible-l2 needs -recipe's token2 bound with it)")
	fs.TextVar(&o.plan.Set.L2Bound, "l2-bound", ops.BoundKim, "the `bound` contractive-l2 and invertible-l2 divide by without -recipe (train -l2-bound): kim, product or token2, in Go and in PyTorch; measurements named arch+product, arch+token2")
	fs.BoolVar(&o.plan.Interleave, "interleave", false, "time each configuration's architectures in alternation, a run of each per round, in one process (bench.MeasureInterleaved), and print each one's run time over the first architecture's in the same round (quartiles over the rounds): comparisons that the machine's drift does not blur; not with -torch or -soak")
	fs.BoolVar(&o.plan.Set.Recipe, "recipe", false, "measure contractive-l2 and invertible-l2 as their certified recipes train them (the token2 bound, temperatures, position bias; invertible-l2 with the MLP gain and 8 MLP sub-blocks), named arch+recipe")
	fs.BoolVar(&o.json, "json", false, "print one JSON object per measurement (and per comparison) instead of a table")
	fs.BoolVar(&o.torch, "torch", false, "also run bench/torch_ref.py on the same weights and batch: step-0 loss check and Go/PyTorch time ratios")
	fs.StringVar(&o.runner.Python, "python", "/usr/bin/python3", "Python interpreter with torch and numpy, for -torch")
	fs.StringVar(&o.runner.Script, "torch-script", "bench/torch_ref.py", "path of the PyTorch reference, for -torch")
	fs.IntVar(&o.runner.Threads, "torch-threads", 2, "PyTorch intra-op threads (torch.set_num_threads)")
	fs.IntVar(&o.runner.Interop, "torch-interop", 1, "PyTorch inter-op threads (torch.set_num_interop_threads)")
	fs.IntVar(&o.runner.BLASThreads, "torch-blas-threads", 2, "OPENBLAS_NUM_THREADS for PyTorch's OpenBLAS (its matrix products)")
	fs.StringVar(&o.runner.OMPWait, "torch-omp-wait", "PASSIVE", "OMP_WAIT_POLICY for PyTorch's OpenMP workers: PASSIVE or ACTIVE")
	fs.Float64Var(&o.plan.LossTol, "loss-tol", 1e-4, "largest accepted |Go - PyTorch| step-0 loss, in nats")
	fs.StringVar(&o.out, "out", "", "output file: also write the JSON records to it (with the table on stdout)")
	fs.IntVar(&o.soak, "soak", 0, "instead of timing the modes, run this many training steps of each configuration and architecture and report the live heap along the way (bench.Job.Soak)")
	pool := fs.Bool("pool", false, "instead of measuring, pool the records of earlier runs: the arguments are their JSONL files (-out, bench/compare.sh); prints Go's and PyTorch's medians over the runs and the ratios")
	fs.StringVar(&o.cpuProf, "cpuprofile", "", "write a CPU profile of the Go runs (warm-up included) to this file, for go tool pprof")
	fs.StringVar(&o.trace, "trace", "", "write an execution trace of the Go runs (warm-up included) to this file, for go tool trace: which goroutine ran on which core when")
	ckpts := fs.String("ckpt", "", "time these saved models (comma-separated run directories or checkpoint files) in place of -configs and -archs: each from its weights, with its own training settings, on a batch of its corpus (the batch its run would have drawn next); named by run directory")
	fs.StringVar(&o.data, "data", "", "with -ckpt: the corpus of the batches (default: the one each checkpoint was trained on; a warning says when the text differs from it)")
	fs.StringVar(&o.dataDir, "data-dir", "", "with -ckpt: where corpora are found and downloaded (default: the run's, else the user cache directory)")
	fs.StringVar(&o.keep, "keep", "", "write the checkpoints given to PyTorch into this directory and keep them (default: a temporary directory)")
	cli.Alias(fs, "o", "out")
	cli.Alias(fs, "steps", "reps")
	cli.Alias(fs, "warmup", "warmup-reps")
	if err := cli.ParseArgs(fs, args); err != nil {
		return o, err
	}
	switch {
	case *pool && fs.NArg() == 0:
		return o, errors.New("-pool: name the JSONL files to pool")
	case *pool:
		o.pool = fs.Args()
	default:
		if err := cli.NoArgs(fs); err != nil {
			return o, err
		}
	}
	var err error
	if o.plan.Presets, err = model.FindPresets(*configs); err != nil {
		return o, fmt.Errorf("-configs: %w", err)
	}
	if o.plan.Archs, err = parseArchs(*archs); err != nil {
		return o, err
	}
	if o.plan.Modes, err = parseList("-modes", *modes, bench.Modes()); err != nil {
		return o, err
	}
	// measure in a fixed order: train first, so eval and sample can be compared with it
	o.plan.Modes = slices.DeleteFunc(bench.Modes(), func(m string) bool { return !slices.Contains(o.plan.Modes, m) })
	var errs []string
	if *ckpts != "" {
		o.ckpts = strings.Split(*ckpts, ",")
		errs = append(errs, ckptConflicts(fs)...)
	} else if o.data != "" || o.dataDir != "" {
		errs = append(errs, "-data and -data-dir: only with -ckpt")
	}
	if o.plan.Set.Steps < 1 {
		errs = append(errs, fmt.Sprintf("-reps %d, want >= 1", o.plan.Set.Steps))
	}
	if o.plan.Set.PowerIters < 1 {
		errs = append(errs, fmt.Sprintf("-power-iters %d, want >= 1", o.plan.Set.PowerIters))
	}
	if o.plan.Set.Warmup < 0 {
		errs = append(errs, fmt.Sprintf("-warmup-reps %d, want >= 0", o.plan.Set.Warmup))
	}
	if m := o.plan.Set.Muon; !(m >= 0) || math.IsInf(m, 0) {
		errs = append(errs, fmt.Sprintf("-muon %g, want a finite scale >= 0 (0: AdamW for all)", m))
	}
	if _, err := ops.ParseActivation(o.plan.Set.Activation); err != nil {
		errs = append(errs, "-activation: "+err.Error())
	}
	if k, r := o.plan.Set.LipK, o.plan.Set.EmbedRadius; !(k >= 0) || math.IsInf(k, 0) || !(r >= 0) || math.IsInf(r, 0) || (k > 0 && !o.plan.Set.Recipe) || (r > 0 && k == 0) {
		errs = append(errs, fmt.Sprintf("-lip-k %g and -embed-radius %g: want finite values >= 0, -lip-k only with -recipe and -embed-radius only with -lip-k", k, r))
	}
	if o.plan.Set.Recipe && o.plan.Set.L2Bound != ops.BoundKim {
		errs = append(errs, fmt.Sprintf("-l2-bound %v with -recipe: the recipes divide by token2 (leave -l2-bound out)", o.plan.Set.L2Bound))
	}
	if n := o.plan.Set.TokenBytes; n < 0 || n > 8 {
		errs = append(errs, fmt.Sprintf("-token-bytes %d, want 0 to 8 (0 or 1: byte tokens)", n))
	}
	if n := o.plan.Set.MLPBlocks; n < 0 {
		errs = append(errs, fmt.Sprintf("-mlp-blocks %d, want >= 0 (0: one, or the recipe's)", n))
	} else if n > 0 {
		for _, p := range o.plan.Presets {
			if (4*p.Width)%n != 0 {
				errs = append(errs, fmt.Sprintf("-mlp-blocks %d does not divide %s's MLP width %d", n, p.Name, 4*p.Width))
			}
		}
	}
	if o.plan.Set.Mix < 0 {
		errs = append(errs, fmt.Sprintf("-mix %d, want >= 0 (0: no mixing sub-block)", o.plan.Set.Mix))
	}
	if o.plan.Set.SampleBatch < 1 || (o.plan.Set.SampleBatch > 1 && o.torch && slices.Contains(o.plan.Modes, bench.ModeSample)) {
		errs = append(errs, fmt.Sprintf("-sample-batch %d, want >= 1, and 1 with -torch (PyTorch's reference samples one sequence)", o.plan.Set.SampleBatch))
	}
	if o.plan.Set.SampleWindow != string(model.Shift) && o.plan.Set.SampleWindow != bench.SampleWindowNone {
		errs = append(errs, fmt.Sprintf("-sample-window %q, want shift or none", o.plan.Set.SampleWindow))
	}
	if o.plan.Interleave && (o.torch || o.soak > 0) {
		errs = append(errs, "-interleave: not with -torch or -soak")
	}
	if o.soak < 0 || (o.soak > 0 && o.torch) {
		errs = append(errs, fmt.Sprintf("-soak %d, want >= 0 and without -torch", o.soak))
	}
	if o.torch && (o.runner.Threads < 1 || o.runner.Interop < 1 || o.runner.BLASThreads < 1) {
		errs = append(errs, fmt.Sprintf("-torch-threads %d, -torch-interop %d, -torch-blas-threads %d: want each >= 1",
			o.runner.Threads, o.runner.Interop, o.runner.BLASThreads))
	}
	if o.runner.OMPWait != "PASSIVE" && o.runner.OMPWait != "ACTIVE" {
		errs = append(errs, fmt.Sprintf("-torch-omp-wait %q, want PASSIVE or ACTIVE", o.runner.OMPWait))
	}
	if !(o.plan.LossTol > 0) {
		errs = append(errs, fmt.Sprintf("-loss-tol %g, want > 0", o.plan.LossTol))
	}
	if len(errs) > 0 {
		return o, errors.New(strings.Join(errs, "; "))
	}
	return o, nil
}

// ckptConflicts names the flags set beside -ckpt that set the models and training
// settings bench builds: a saved model has its own.
func ckptConflicts(fs *flag.FlagSet) []string {
	model := []string{"configs", "archs", "dtype", "recipe", "muon", "power-iters", "mix", "mlp-blocks", "activation",
		"lip-k", "embed-radius", "token-bytes", "ball", "l2-bound", "torch"}
	var errs []string
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(model, f.Name) {
			errs = append(errs, fmt.Sprintf("-%s with -ckpt: a saved model is timed with its own config and training settings", f.Name))
		}
	})
	return errs
}

// parseArchs parses the -archs list, each architecture once.
func parseArchs(list string) ([]spec.Arch, error) {
	var out []spec.Arch
	for _, s := range strings.Split(list, ",") {
		a, err := spec.ParseArch(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("-archs: %w", err)
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// parseList splits a comma-separated list and checks every item is one of valid.
func parseList(flag, list string, valid []string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(valid, s) {
			return nil, fmt.Errorf("%s: %q, want some of %s", flag, s, strings.Join(valid, ", "))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	dir := o.keep
	if o.torch {
		if _, err := os.Stat(o.runner.Script); err != nil {
			return fmt.Errorf("-torch-script: %w (run from the repository root or pass the path of bench/torch_ref.py)", err)
		}
		if err := o.runner.Check(ctx); err != nil {
			return fmt.Errorf("-python %w", err)
		}
		if dir == "" {
			if dir, err = os.MkdirTemp("", "lipformer-bench-"); err != nil {
				return err
			}
			defer os.RemoveAll(dir)
		} else if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		o.plan.Torch, o.plan.Dir = &o.runner, dir
	}
	out := &bench.Printer{W: stdout, JSON: o.json}
	if o.out != "" {
		f, err := os.Create(o.out)
		if err != nil {
			return err
		}
		defer f.Close()
		out.Also = f
	}
	if o.pool != nil {
		return out.PrintPool(o.pool)
	}
	if o.cpuProf != "" {
		stopProfile, err := cli.StartCPUProfile(o.cpuProf)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	if o.trace != "" {
		stopTrace, err := cli.StartTrace(o.trace)
		if err != nil {
			return err
		}
		defer stopTrace()
	}
	if o.ckpts != nil {
		if o.plan.Checkpoints, err = checkpointJobs(ctx, o, cli.Logger(stderr)); err != nil {
			return err
		}
	}
	if o.soak > 0 {
		if err := out.SoakHeader(o.plan.Set.Dtype.String(), o.soak, o.plan.Set.Warmup); err != nil {
			return err
		}
		return o.plan.Soak(ctx, o.soak, out.Soak)
	}
	if err := out.Header(o.plan.Set); err != nil {
		return err
	}
	comps, checks, err := o.plan.Run(ctx, out.Measurement)
	if err != nil {
		return err
	}
	if err := out.Summary(comps, checks); err != nil {
		return err
	}
	return bench.CheckLosses(checks)
}
