package main

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"lipformer/kernel"
	"lipformer/model"
	"lipformer/train"
)

// Modes of a measurement, in the order they are measured.
const (
	modeTrain  = "train"  // a training step: forward, backward, clip, AdamW (train.Stepper)
	modeEval   = "eval"   // a forward-only Eval program on the training batch
	modeSample = "sample" // generated tokens: model.Generate with the decoder's cache, window shift
)

// allModes lists the modes in measuring order.
func allModes() []string { return []string{modeTrain, modeEval, modeSample} }

// measurement is one timed program at one configuration: one JSON object of the output.
// bench/torch_ref.py prints the same fields for PyTorch (and a few of its own).
type measurement struct {
	Impl           string  `json:"impl"`    // go or torch
	Config         string  `json:"config"`  // preset name
	Arch           string  `json:"arch"`    // model architecture
	Mode           string  `json:"mode"`    // train, eval or sample
	Dtype          string  `json:"dtype"`   // float32 or float64
	Backend        string  `json:"backend"` // Go: the BLAS of the build (kernel.Backend); torch: its BLAS
	Threads        int     `json:"threads"` // Go: GOMAXPROCS; torch: intra-op threads
	Batch          int     `json:"batch"`   // sequences per run (for sample: decoded in step, -sample-batch)
	Context        int     `json:"context"` // T, positions per sequence
	Params         int     `json:"params"`  // scalar parameters of the model
	Steps          int     `json:"steps"`   // timed runs
	Warmup         int     `json:"warmup"`  // untimed runs before them
	MsMedian       float64 `json:"ms_median"`
	MsMin          float64 `json:"ms_min"`
	MsMax          float64 `json:"ms_max"`
	Positions      int     `json:"positions"`                 // token positions computed per run, Batch*Context; Go sample: prefilled and stepped
	TokensPerS     float64 `json:"tokens_per_s"`              // positions per second at the median
	NsPerToken     float64 `json:"ns_per_token"`              // median nanoseconds per position
	GeneratedPerS  float64 `json:"generated_per_s"`           // sample: generated tokens per second at the median
	Generated      int     `json:"generated,omitempty"`       // Go sample: tokens generated per run
	NsPerGenerated float64 `json:"ns_per_gen,omitempty"`      // Go sample: median nanoseconds per generated token
	Window         string  `json:"window,omitempty"`          // Go sample: the window policy (model.Window)
	GFLOP          float64 `json:"gflop"`                     // matrix-product GFLOP per run (flops.go)
	GFLOPPerS      float64 `json:"gflop_per_s"`               // GFLOP / median time
	BytesPerStep   float64 `json:"bytes_per_step"`            // Go: heap bytes allocated per timed run
	AllocsPerStep  float64 `json:"allocs_per_step"`           // Go: heap objects allocated per timed run
	HeapLiveStart  uint64  `json:"heap_live_start"`           // Go: live heap bytes after warm-up (HeapAlloc after a full GC)
	HeapLiveEnd    uint64  `json:"heap_live_end"`             // Go: live heap bytes after the timed runs (HeapAlloc after a full GC)
	Loss           float64 `json:"loss"`                      // loss of the last timed run (train, eval); torch mode loss: step 0
	LossAfterStep  float64 `json:"loss_after_step,omitempty"` // torch mode loss: after one training step
	SpeedupVsTrain float64 `json:"speedup_vs_train"`          // train ns/token over this ns/token (eval) or ns/gen (sample)
	GoVersion      string  `json:"go_version,omitempty"`      // Go runtime
	TorchVersion   string  `json:"torch_version,omitempty"`   // torch only
	InteropThreads int     `json:"interop_threads,omitempty"`
	BLASThreads    int     `json:"blas_threads,omitempty"`
	OMPWaitPolicy  string  `json:"omp_wait_policy,omitempty"`
}

// nsPerGenerated is a sample measurement's median nanoseconds per generated token: Go's
// NsPerGenerated, PyTorch's one token per run; 0 for other modes.
func (r measurement) nsPerGenerated() float64 {
	switch {
	case r.Mode != modeSample:
		return 0
	case r.NsPerGenerated > 0:
		return r.NsPerGenerated
	case r.GeneratedPerS > 0:
		return 1e9 / r.GeneratedPerS
	}
	return 0
}

// nsPerUnit is the median ns per position (train, eval) or per generated token (sample):
// what a speedup over the training step compares.
func (r measurement) nsPerUnit() float64 {
	if r.Mode == modeSample {
		return r.nsPerGenerated()
	}
	return r.NsPerToken
}

// msPerUnit is the median ms per run, or for sample per generated token (Go's sample runs
// generate several tokens, PyTorch's one): what a Go/PyTorch ratio compares.
func (r measurement) msPerUnit() float64 {
	if r.Mode == modeSample {
		return r.nsPerGenerated() / 1e6
	}
	return r.MsMedian
}

// timing is what timeRuns measured.
type timing struct {
	durs               []time.Duration // of each timed run
	bytes, allocs      float64         // per timed run
	heapStart, heapEnd uint64          // live heap after warm-up and after the timed runs (settledHeap)
}

// timeRuns calls run warmup times, then steps times with each call timed, and reads the
// allocation counters around the timed calls. run gets the call's index from 0.
func timeRuns(warmup, steps int, run func(i int) error) (timing, error) {
	for i := 0; i < warmup; i++ {
		if err := run(i); err != nil {
			return timing{}, err
		}
	}
	t := timing{durs: make([]time.Duration, steps)}
	t.heapStart = settledHeap()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range t.durs {
		t0 := time.Now()
		if err := run(warmup + i); err != nil {
			return timing{}, err
		}
		t.durs[i] = time.Since(t0)
	}
	runtime.ReadMemStats(&after)
	t.bytes = float64(after.TotalAlloc-before.TotalAlloc) / float64(steps)
	t.allocs = float64(after.Mallocs-before.Mallocs) / float64(steps)
	t.heapEnd = settledHeap()
	return t, nil
}

// settledHeap collects garbage until the finalizers it queued have run and their objects
// are collected too (Gorgonia's tape machines have finalizers, so a dropped program takes
// two cycles), and returns the live heap bytes.
func settledHeap() uint64 {
	var m runtime.MemStats
	for range 3 {
		runtime.GC()
		time.Sleep(time.Millisecond) // lets the finalizer goroutine run
	}
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// median is the median of xs, not empty (the mean of the middle two for an even count):
// run times, or times pooled over runs.
func median[T time.Duration | float64](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// benchBatch is a deterministic batch of B sequences of T tokens: rows of a random token
// stream, targets the inputs shifted by one. Both are (B*T), row-major (B, T).
func benchBatch(seed uint64, batch, context, vocab int) (inputs, targets []int) {
	rng := rand.New(rand.NewPCG(seed, 0x62656e6368)) // "bench"
	inputs, targets = make([]int, batch*context), make([]int, batch*context)
	for b := 0; b < batch; b++ {
		prev := rng.IntN(vocab)
		for t := 0; t < context; t++ {
			next := rng.IntN(vocab)
			inputs[b*context+t], targets[b*context+t] = prev, next
			prev = next
		}
	}
	return inputs, targets
}

// job is one (configuration, architecture) of a benchmark run.
type job struct {
	p       preset
	cfg     model.Config
	inputs  []int // (B*T)
	targets []int // (B*T)
	opt     options
}

// newJob builds the configuration and the batch of a preset and architecture.
func newJob(p preset, arch string, opt options) job {
	in, tg := benchBatch(opt.seed, p.Batch, p.Context, p.Vocab)
	return job{p: p, cfg: p.config(arch, opt.dtype), inputs: in, targets: tg, opt: opt}
}

// measure times one mode on a fresh model (initialised from the seed).
func (j job) measure(mode string) (measurement, error) {
	m, err := model.New(j.cfg, j.opt.seed)
	if err != nil {
		return measurement{}, err
	}
	var tm timing
	var loss float64
	var gen sampleRun
	batch := j.p.Batch
	switch mode {
	case modeTrain:
		if j.cfg.Dtype == "float64" {
			tm, loss, err = timeTrain[float64](m, j)
		} else {
			tm, loss, err = timeTrain[float32](m, j)
		}
	case modeEval:
		tm, loss, err = timeEval(m, j)
	case modeSample:
		batch = j.opt.sampleBatch
		tm, gen, err = timeSample(m, j)
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		return measurement{}, fmt.Errorf("%s %s %s: %w", j.p.Name, j.cfg.Arch, mode, err)
	}
	fl, err := countFLOPs(j.cfg, batch)
	if err != nil {
		return measurement{}, err
	}
	gflop := fl.Forward / 1e9
	if mode == modeTrain {
		gflop = fl.Train / 1e9
	}
	if mode == modeSample {
		gflop = gen.flops / 1e9
	}
	med := median(tm.durs).Seconds()
	r := measurement{Impl: "go", Config: j.p.Name, Arch: j.cfg.Arch, Mode: mode, Dtype: j.cfg.Dtype, Backend: kernel.Backend,
		Threads: runtime.GOMAXPROCS(0), Batch: batch, Context: j.cfg.Context, Params: m.NumParams(),
		Steps: j.opt.steps, Warmup: j.opt.warmup, MsMedian: 1e3 * med,
		MsMin: 1e3 * slices.Min(tm.durs).Seconds(), MsMax: 1e3 * slices.Max(tm.durs).Seconds(),
		Positions: batch * j.cfg.Context, GFLOP: gflop, GFLOPPerS: gflop / med,
		BytesPerStep: tm.bytes, AllocsPerStep: tm.allocs, HeapLiveStart: tm.heapStart, HeapLiveEnd: tm.heapEnd,
		Loss: loss, GoVersion: runtime.Version()}
	if mode == modeSample {
		r.Positions, r.Generated, r.Window = gen.positions, gen.generated, j.opt.sampleWindow
		r.GeneratedPerS = float64(gen.generated) / med
		r.NsPerGenerated = 1e9 * med / float64(gen.generated)
	}
	r.TokensPerS = float64(r.Positions) / med
	r.NsPerToken = 1e9 * med / float64(r.Positions)
	return r, nil
}

// timeTrain times training steps (train.Stepper.Step, the trainer's code path) on the
// job's batch at the default options' constant peak learning rate, Adam settings and clip.
func timeTrain[T train.Float](m *model.Model, j job) (timing, float64, error) {
	st, lr, err := jobStepper[T](m, j)
	if err != nil {
		return timing{}, 0, err
	}
	defer st.Close()
	var loss float64
	tm, err := timeRuns(j.opt.warmup, j.opt.steps, func(i int) error {
		var err error
		loss, _, err = st.Step(i, lr)
		return err
	})
	return tm, loss, err
}

// jobStepper makes a training stepper of m with the default options' Adam settings and
// clip, loaded with the job's batch, and returns the options' constant peak learning
// rate. The caller closes it.
func jobStepper[T train.Float](m *model.Model, j job) (*train.Stepper[T], float64, error) {
	o := defaultBenchOptions(j.opt.seed)
	st, err := train.NewStepper[T](m, j.p.Batch, o.adam(), o.Clip, o.Seed)
	if err != nil {
		return nil, 0, err
	}
	copy(st.Prog.Inputs, j.inputs)
	copy(st.Prog.Targets, j.targets)
	return st, o.LR, nil
}

// timeEval times forward-only Eval programs on the job's batch.
func timeEval(m *model.Model, j job) (timing, float64, error) {
	p, err := m.NewProgram(model.Eval, j.p.Batch)
	if err != nil {
		return timing{}, 0, err
	}
	defer p.Close()
	copy(p.Inputs, j.inputs)
	copy(p.Targets, j.targets)
	tm, err := timeRuns(j.opt.warmup, j.opt.steps, func(int) error { return p.Run() })
	return tm, p.Loss(), err
}

// sampleRun is what one timed run of timeSample does.
type sampleRun struct {
	generated int     // tokens generated
	positions int     // positions computed: prefilled and stepped
	flops     float64 // matrix-product FLOPs (countFillFLOPs)
}

// sampleCycles is the number of shift-window cycles of one timed run of timeSample.
const sampleCycles = 4

// sampleWindowNone is the -sample-window value that times generation within the context.
const sampleWindowNone = "none"

// timeSample times generation with model.GenerateBatch of -sample-batch sequences in step,
// with the decoder's key/value cache, at temperature 1 over the whole vocabulary. With
// -sample-window shift (the steady state of cmd/sample) a run starts from prompts of
// T/2+1 bytes, whose prefill is the one a shift makes, and generates sampleCycles *
// (T - T/2) tokens per sequence (2T for even T): sampleCycles whole cycles, each a prefill
// of T/2+1 positions and T - T/2 - 1 single steps, so that the time per token includes the
// amortised re-prefills. With -sample-window none a run generates T tokens per sequence
// from a 1-byte prompt, within the context: one position per token, no re-prefill.
func timeSample(m *model.Model, j job) (timing, sampleRun, error) {
	b := j.opt.sampleBatch
	d, err := m.NewBatchDecoder(b)
	if err != nil {
		return timing{}, sampleRun{}, err
	}
	t := j.cfg.Context
	prompt, cycles := t/2+1, sampleCycles
	if j.opt.sampleWindow == sampleWindowNone {
		prompt, cycles = 1, 1
	}
	fill, err := countFillFLOPs(j.cfg, prompt)
	if err != nil {
		return timing{}, sampleRun{}, err
	}
	perSeq := cycles * (t - prompt + 1)
	run := sampleRun{generated: b * perSeq, positions: b * cycles * t, flops: float64(b*cycles) * fill}
	ids, _ := benchBatch(j.opt.seed, b, t, j.cfg.Vocab)
	prompts := make([][]int, b)
	for i := range prompts {
		prompts[i] = ids[i*t : i*t+prompt]
	}
	s := model.Sampling{Temperature: 1, Window: model.Shift}
	rng := rand.New(rand.NewPCG(j.opt.seed, 0x73616d706c65)) // "sample"
	tm, err := timeRuns(j.opt.warmup, j.opt.steps, func(int) error {
		_, err := model.GenerateBatch(d, prompts, perSeq, s, rng)
		return err
	})
	return tm, run, err
}

// goLossAfterStep is the loss of the job's batch after one training step on it from m's
// current weights (which it changes), with timeTrain's settings.
func goLossAfterStep(m *model.Model, j job) (float64, error) {
	var err error
	if j.cfg.Dtype == "float64" {
		err = oneStep[float64](m, j)
	} else {
		err = oneStep[float32](m, j)
	}
	if err != nil {
		return 0, err
	}
	return goLoss(m, j)
}

// oneStep takes training step 0 on the job's batch.
func oneStep[T train.Float](m *model.Model, j job) error {
	st, lr, err := jobStepper[T](m, j)
	if err != nil {
		return err
	}
	defer st.Close()
	_, _, err = st.Step(0, lr)
	return err
}

// goLoss is the loss of the job's batch under m's current weights (an Eval program): the
// loss of training step 0 when m is fresh.
func goLoss(m *model.Model, j job) (float64, error) {
	p, err := m.NewProgram(model.Eval, j.p.Batch)
	if err != nil {
		return 0, err
	}
	defer p.Close()
	copy(p.Inputs, j.inputs)
	copy(p.Targets, j.targets)
	if err := p.Run(); err != nil {
		return 0, err
	}
	return p.Loss(), nil
}
