// Command bench measures lipformer's speed: a full training step (forward, backward,
// global-norm clip, AdamW update: train.Stepper, the trainer's code path), a forward-only
// evaluation program and sampling (model.Generate with the decoder's key/value cache and
// the shift window, timed per generated token in the steady state, re-prefills included),
// for reference configurations and architectures. Per measurement it reports the median
// time over the timed runs, tokens per second (sample: also ns per generated token),
// achieved GFLOP/s against the analytic matrix-product FLOPs (flops.go), heap bytes and
// objects allocated per run, and the live heap before and after the timed runs.
// With -torch it also runs bench/torch_ref.py (PyTorch, same weights, batch and optimizer
// settings) on every configuration, checks that both compute the same loss at step 0 and
// after one training step, and prints the ratio of Go's time to PyTorch's (bench/compare.sh
// does it for both BLAS builds).
//
//	go run ./cmd/bench -steps 2 -warmup 1 -configs P2          # a quick look
//	go run -tags openblas ./cmd/bench -json > go.jsonl          # the OpenBLAS build
//	go run ./cmd/bench -torch -archs dp,l2                      # against PyTorch
//	go run ./cmd/bench -configs P2 -soak 1000                   # live heap over 1000 training steps
//	go run ./cmd/bench -configs P1 -archs dp -modes train -cpuprofile cpu.prof  # then go tool pprof
//	go run ./cmd/bench -modes train,sample -sample-batch 16     # sampling 16 sequences in step
//	go run ./cmd/bench -modes train,sample -sample-window none  # sampling within the context
//	go run ./cmd/bench -pool out/bench/round-*/*.jsonl          # medians over runs (bench/compare.sh with ROUNDS)
//
// The machine should be idle: the timings are medians, but other load still shifts them.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"

	"lipformer/internal/cli"
	"lipformer/kernel"
	"lipformer/model"
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
	presets []preset
	archs   []string
	modes   []string // in measuring order
	steps   int
	warmup  int
	seed    uint64
	dtype   string
	json    bool
	torch   bool
	runner  torchRunner
	lossTol float64
	keep    string // directory for the checkpoints given to PyTorch, or "" for a temporary one
	out     string // file that receives the JSON records too, or ""
	soak    int    // training steps of a soak (soak.go) instead of the timed modes, or 0
	cpuProf string // file that receives a CPU profile of the Go measurements, or ""
	// sequences sampled in step (model.GenerateBatch) by the sample mode, and its window:
	// shift or none (sampleWindowNone)
	sampleBatch  int
	sampleWindow string
	pool         []string // JSONL files to pool instead of measuring (pool.go), or nil
}

// parseFlags parses and validates the command line.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var names []string
	for _, p := range presets() {
		names = append(names, fmt.Sprintf("%s (%s)", p.Name, p.About))
	}
	configs := fs.String("configs", "P1,P2,P3", "reference configurations: "+strings.Join(names, "; "))
	archs := fs.String("archs", "dp,l2,invertible-l2", "architectures: "+strings.Join(model.Architectures, ", "))
	modes := fs.String("modes", "train,eval,sample", "what to time: train (a training step), eval (a forward-only batch), sample (generated tokens: KV cache, window shift)")
	var o options
	fs.IntVar(&o.steps, "steps", 10, "timed runs per measurement (the median is reported)")
	fs.IntVar(&o.warmup, "warmup", 2, "untimed runs before the timed ones")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the initial weights and the batch")
	fs.StringVar(&o.sampleWindow, "sample-window", string(model.Shift), "what the sample mode times: shift (the steady state beyond the context: re-prefills of T/2 bytes included) or none (generation within the context, from a 1-byte prompt to T bytes)")
	fs.IntVar(&o.sampleBatch, "sample-batch", 1, "sequences the sample mode decodes in step (model.GenerateBatch); its time is per generated token of all of them")
	fs.StringVar(&o.dtype, "dtype", "float32", "float32 or float64")
	fs.BoolVar(&o.json, "json", false, "print one JSON object per measurement (and per comparison) instead of a table")
	fs.BoolVar(&o.torch, "torch", false, "also run bench/torch_ref.py on the same weights and batch: step-0 loss check and Go/PyTorch time ratios")
	fs.StringVar(&o.runner.python, "python", "/usr/bin/python3", "Python interpreter with torch and numpy, for -torch")
	fs.StringVar(&o.runner.script, "torch-script", "bench/torch_ref.py", "path of the PyTorch reference, for -torch")
	fs.IntVar(&o.runner.threads, "torch-threads", 2, "PyTorch intra-op threads (torch.set_num_threads)")
	fs.IntVar(&o.runner.interop, "torch-interop", 1, "PyTorch inter-op threads (torch.set_num_interop_threads)")
	fs.IntVar(&o.runner.blasThreads, "torch-blas-threads", 2, "OPENBLAS_NUM_THREADS for PyTorch's OpenBLAS (its matrix products)")
	fs.StringVar(&o.runner.ompWait, "torch-omp-wait", "PASSIVE", "OMP_WAIT_POLICY for PyTorch's OpenMP workers: PASSIVE or ACTIVE")
	fs.Float64Var(&o.lossTol, "loss-tol", 1e-4, "largest accepted |Go - PyTorch| step-0 loss, in nats")
	fs.StringVar(&o.out, "o", "", "also write the JSON records to this file (with the table on stdout)")
	fs.IntVar(&o.soak, "soak", 0, "instead of timing the modes, run this many training steps of each configuration and architecture and report the live heap along the way (soak.go)")
	pool := fs.Bool("pool", false, "instead of measuring, pool the records of earlier runs: the arguments are their JSONL files (-o, bench/compare.sh); prints Go's and PyTorch's medians over the runs and the ratios")
	fs.StringVar(&o.cpuProf, "cpuprofile", "", "write a CPU profile of the Go runs (warm-up included) to this file, for go tool pprof")
	fs.StringVar(&o.keep, "keep", "", "write the checkpoints given to PyTorch into this directory and keep them (default: a temporary directory)")
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
	if o.presets, err = findPresets(*configs); err != nil {
		return o, err
	}
	if o.archs, err = parseList("-archs", *archs, model.Architectures); err != nil {
		return o, err
	}
	if o.modes, err = parseList("-modes", *modes, allModes()); err != nil {
		return o, err
	}
	// measure in a fixed order: train first, so eval and sample can be compared with it
	o.modes = slices.DeleteFunc(allModes(), func(m string) bool { return !slices.Contains(o.modes, m) })
	var errs []string
	if o.steps < 1 {
		errs = append(errs, fmt.Sprintf("-steps %d, want >= 1", o.steps))
	}
	if o.warmup < 0 {
		errs = append(errs, fmt.Sprintf("-warmup %d, want >= 0", o.warmup))
	}
	if o.sampleBatch < 1 || (o.sampleBatch > 1 && o.torch && slices.Contains(o.modes, modeSample)) {
		errs = append(errs, fmt.Sprintf("-sample-batch %d, want >= 1, and 1 with -torch (PyTorch's reference samples one sequence)", o.sampleBatch))
	}
	if o.sampleWindow != string(model.Shift) && o.sampleWindow != sampleWindowNone {
		errs = append(errs, fmt.Sprintf("-sample-window %q, want shift or none", o.sampleWindow))
	}
	if o.soak < 0 || (o.soak > 0 && o.torch) {
		errs = append(errs, fmt.Sprintf("-soak %d, want >= 0 and without -torch", o.soak))
	}
	if o.dtype != "float32" && o.dtype != "float64" {
		errs = append(errs, fmt.Sprintf("-dtype %q, want float32 or float64", o.dtype))
	}
	if o.torch && (o.runner.threads < 1 || o.runner.interop < 1 || o.runner.blasThreads < 1) {
		errs = append(errs, fmt.Sprintf("-torch-threads %d, -torch-interop %d, -torch-blas-threads %d: want each >= 1",
			o.runner.threads, o.runner.interop, o.runner.blasThreads))
	}
	if o.runner.ompWait != "PASSIVE" && o.runner.ompWait != "ACTIVE" {
		errs = append(errs, fmt.Sprintf("-torch-omp-wait %q, want PASSIVE or ACTIVE", o.runner.ompWait))
	}
	if !(o.lossTol > 0) {
		errs = append(errs, fmt.Sprintf("-loss-tol %g, want > 0", o.lossTol))
	}
	if len(errs) > 0 {
		return o, errors.New(strings.Join(errs, "; "))
	}
	return o, nil
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
		if err := o.runner.check(ctx); err != nil {
			return err
		}
		if dir == "" {
			if dir, err = os.MkdirTemp("", "lipformer-bench-"); err != nil {
				return err
			}
			defer os.RemoveAll(dir)
		} else if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	out := &printer{w: stdout, json: o.json}
	if o.out != "" {
		f, err := os.Create(o.out)
		if err != nil {
			return err
		}
		defer f.Close()
		out.also = f
	}
	if o.pool != nil {
		return runPool(o.pool, out)
	}
	if o.cpuProf != "" {
		stopProfile, err := startCPUProfile(o.cpuProf)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	if o.soak > 0 {
		return runSoak(ctx, o, out)
	}
	if err := out.header(o); err != nil {
		return err
	}
	var checks []lossCheck
	var comps []comparison
	for _, p := range o.presets {
		for _, arch := range o.archs {
			if err := ctx.Err(); err != nil {
				return err
			}
			j := newJob(p, arch, o)
			goRuns := map[string]measurement{}
			for _, mode := range o.modes {
				r, err := j.measure(mode)
				if err != nil {
					return err
				}
				addSpeedup(&r, goRuns)
				goRuns[mode] = r
				if err := out.measurement(r); err != nil {
					return err
				}
			}
			if !o.torch {
				continue
			}
			lc, trs, err := j.torchRun(ctx, o.runner, dir, o.modes)
			if err != nil {
				return err
			}
			torchRuns := map[string]measurement{}
			for _, r := range trs {
				addSpeedup(&r, torchRuns)
				torchRuns[r.Mode] = r
				if err := out.measurement(r); err != nil {
					return err
				}
				if g, ok := goRuns[r.Mode]; ok {
					goMs, torchMs := g.msPerUnit(), r.msPerUnit()
					comps = append(comps, comparison{Impl: "compare", Config: p.Name, Arch: arch, Mode: r.Mode,
						GoMs: goMs, TorchMs: torchMs, Ratio: goMs / torchMs})
				}
			}
			checks = append(checks, lc)
		}
	}
	if err := out.summary(comps, checks); err != nil {
		return err
	}
	var bad []string
	for _, c := range checks {
		if !c.OK {
			bad = append(bad, fmt.Sprintf("%s %s: Go %.8f and %.8f, PyTorch %.8f and %.8f (|diff| %.2g and %.2g, tolerance %.2g)",
				c.Config, c.Arch, c.GoLoss, c.GoLoss1, c.TorchLoss, c.TorchLoss1, c.AbsDiff, c.AbsDiff1, c.Tol))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("Go and PyTorch losses differ: %s", strings.Join(bad, "; "))
	}
	return nil
}

// sampleRunText says what one timed run of the sample mode generates.
func sampleRunText(window string) string {
	if window == sampleWindowNone {
		return "Go generates T tokens per run from a 1-byte prompt, within the context (no re-prefill)"
	}
	return fmt.Sprintf("Go runs %d cycles of window shift per run (a prefill of T/2+1 positions, then steps to T)", sampleCycles)
}

// startCPUProfile starts writing a CPU profile to path and returns the function that
// stops it and closes the file.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// addSpeedup sets an eval or sample measurement's speedup over the training step of the
// same implementation, when there is one: the step's ns per position over eval's ns per
// position, or over sample's ns per generated token.
func addSpeedup(r *measurement, seen map[string]measurement) {
	t, ok := seen[modeTrain]
	if !ok || r.Mode == modeTrain {
		return
	}
	if ns := r.nsPerUnit(); ns > 0 {
		r.SpeedupVsTrain = t.NsPerToken / ns
	}
}

// printer writes measurements as JSON lines or as a table, and as JSON lines to also.
type printer struct {
	w    io.Writer
	json bool
	also io.Writer // or nil
}

// record writes v as a JSON line to also.
func (p *printer) record(v any) error {
	if p.also == nil {
		return nil
	}
	return json.NewEncoder(p.also).Encode(v)
}

// header describes the build and the settings (tables only: every JSON object carries them).
func (p *printer) header(o options) error {
	if p.json {
		return nil
	}
	_, err := fmt.Fprintf(p.w, "%s %s/%s, BLAS %s, GOMAXPROCS %d, %s, median of %d timed runs after %d warm-up\n"+
		"train: forward + backward + clip + AdamW (train.Stepper); eval: forward-only batch;\n"+
		"sample: %s, %d sequences in step (model.GenerateBatch, KV cache),\n"+
		"        PyTorch one token per run (a forward over the full window, no cache)\n"+
		"ns/tok is per position computed; ns/gen is per generated token (sample);\n"+
		"x train is the training step's ns/tok over this one's ns/tok, for sample over its ns/gen;\n"+
		"MB/run and allocs are heap bytes and objects allocated per timed run; live heap is before -> after the timed runs\n\n"+
		"%-5s %-4s %-14s %-6s %10s %19s %9s %8s %8s %9s %9s %15s %8s %9s %7s\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, kernel.Backend, runtime.GOMAXPROCS(0), o.dtype, o.steps, o.warmup, sampleRunText(o.sampleWindow), o.sampleBatch,
		"impl", "conf", "arch", "mode", "ms", "min..max ms", "tok/s", "GFLOP", "GFLOP/s", "MB/run", "allocs", "live heap MB", "ns/tok", "ns/gen", "x train")
	return err
}

// measurement prints one measurement.
func (p *printer) measurement(r measurement) error {
	if err := p.record(r); err != nil {
		return err
	}
	if p.json {
		return json.NewEncoder(p.w).Encode(r)
	}
	mem, allocs, heap := "-", "-", "-"
	if r.Impl == "go" {
		mem, allocs = fmt.Sprintf("%.1f", r.BytesPerStep/1e6), fmt.Sprintf("%.0f", r.AllocsPerStep)
		heap = fmt.Sprintf("%.0f->%.0f", float64(r.HeapLiveStart)/1e6, float64(r.HeapLiveEnd)/1e6)
	}
	speed, gen := "-", "-"
	if r.SpeedupVsTrain > 0 {
		speed = fmt.Sprintf("%.2f", r.SpeedupVsTrain)
	}
	if ns := r.nsPerGenerated(); ns > 0 {
		gen = fmt.Sprintf("%.0f", ns)
	}
	_, err := fmt.Fprintf(p.w, "%-5s %-4s %-14s %-6s %10.2f %19s %9.0f %8.3f %8.2f %9s %9s %15s %8.0f %9s %7s\n",
		r.Impl, r.Config, r.Arch, r.Mode, r.MsMedian, fmt.Sprintf("%.2f..%.2f", r.MsMin, r.MsMax), r.TokensPerS,
		r.GFLOP, r.GFLOPPerS, mem, allocs, heap, r.NsPerToken, gen, speed)
	return err
}

// summary prints the Go/PyTorch ratios and the loss checks.
func (p *printer) summary(comps []comparison, checks []lossCheck) error {
	for _, c := range comps {
		if err := p.record(c); err != nil {
			return err
		}
	}
	for _, c := range checks {
		if err := p.record(c); err != nil {
			return err
		}
	}
	if p.json {
		enc := json.NewEncoder(p.w)
		for _, c := range comps {
			if err := enc.Encode(c); err != nil {
				return err
			}
		}
		for _, c := range checks {
			if err := enc.Encode(c); err != nil {
				return err
			}
		}
		return nil
	}
	if len(comps) > 0 {
		fmt.Fprintf(p.w, "\nGo / PyTorch median time (> 1: Go is slower; sample: per generated token, Go with its KV cache)\n%-4s %-14s %-6s %10s %10s %8s\n", "conf", "arch", "mode", "go ms", "torch ms", "ratio")
		for _, c := range comps {
			fmt.Fprintf(p.w, "%-4s %-14s %-6s %10.2f %10.2f %8.2f\n", c.Config, c.Arch, c.Mode, c.GoMs, c.TorchMs, c.Ratio)
		}
	}
	if len(checks) > 0 {
		fmt.Fprintf(p.w, "\nloss of the batch, Go vs PyTorch, same weights: at step 0 and after one training step on it (tolerance %.2g)\n"+
			"%-4s %-14s %-7s %13s %13s %9s %13s %13s %9s %s\n", checks[0].Tol,
			"conf", "arch", "dtype", "go step 0", "torch step 0", "|diff|", "go step 1", "torch step 1", "|diff|", "ok")
		for _, c := range checks {
			fmt.Fprintf(p.w, "%-4s %-14s %-7s %13.9f %13.9f %9.2g %13.9f %13.9f %9.2g %t\n",
				c.Config, c.Arch, c.Dtype, c.GoLoss, c.TorchLoss, c.AbsDiff, c.GoLoss1, c.TorchLoss1, c.AbsDiff1, c.OK)
		}
	}
	return nil
}
