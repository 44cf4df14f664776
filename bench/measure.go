package bench

import (
	"fmt"
	"runtime"
	"slices"
	"time"

	"lipformer/internal/stats"
	"lipformer/kernel"
	"lipformer/model"
	"lipformer/ops"
	"lipformer/spec"
)

// Modes of a measurement, in the order they are measured.
const (
	ModeTrain  = "train"  // a training step: forward, backward, clip, AdamW (train.Stepper)
	ModeEval   = "eval"   // a forward-only Eval program on the training batch
	ModeSample = "sample" // generated tokens: model.GenerateBatch with the decoder's cache
)

// Modes lists the modes in measuring order.
func Modes() []string { return []string{ModeTrain, ModeEval, ModeSample} }

// Settings say how a job is measured.
type Settings struct {
	Steps  int    // timed runs
	Warmup int    // untimed runs before them
	Seed   uint64 // of the initial weights, the batch and the sampling
	Dtype  spec.Dtype
	// SampleBatch is the number of sequences the sample mode decodes in step
	// (model.GenerateBatch), and SampleWindow what it times: string(model.Shift) or
	// SampleWindowNone (Workload).
	SampleBatch  int
	SampleWindow string
	// Recipe measures contractive-l2 and invertible-l2 as their certified recipes train
	// (spec.Model.WithCertifiedRecipe: the token2 bound, temperatures, a position bias,
	// and for invertible-l2 the MLP gain and RecipeMLPBlocks MLP sub-blocks sharing the
	// preset's MLP width), not as [K] builds them; the other architectures are unchanged.
	Recipe bool
	// Muon > 0 trains the blocks' matrices with Muon at Muon times the learning rate
	// (train.AdamConfig.Muon), in Go and in PyTorch; the measurements' names then end in
	// "+muon".
	Muon float64
	// PowerIters > 0 is the number of power-iteration steps before each training step
	// (train -power-iters), in Go and in PyTorch; 0 takes a training run's default
	// (DefaultStepOptions).
	PowerIters int
	// Mix > 0 gives every architecture a mixing sub-block of Mix taps in each block
	// (spec.Model.Mix); the measurements' names then end in "+mixK".
	Mix int
	// MLPBlocks > 0 gives the invertible architectures MLPBlocks MLP sub-blocks per block
	// sharing the preset's MLP width 4D (spec.Model.MLPBlocks, train -mlp-blocks), in place
	// of one, or of the invertible-l2 recipe's RecipeMLPBlocks; the measurements' names
	// then end in "+mlpN".
	MLPBlocks int
	// Activation is the invertible architectures' MLP activation (spec.Model.Activation:
	// "" or elu, maxmin); with maxmin their measurements' names end in "+maxmin".
	Activation string
	// LipK > 0 bounds the certified invertible-l2 recipe end to end by LipK
	// (spec.Model.LipK: a final ball norm and a spectrally normalised head), with the token
	// table in the ball of radius EmbedRadius when that is > 0 (spec.Model.EmbedRadius);
	// the measurements' names then end in "+kK" (and "+rR"). Only with Recipe, and only
	// invertible-l2 takes it.
	LipK, EmbedRadius float64
	// TokenBytes > 1 gives every architecture tokens of TokenBytes bytes (spec.Model.
	// TokenBytes: a token table row per byte and the bytes before it, an untied head); the
	// measurements' names then end in "+tkN".
	TokenBytes int
	// Ball puts a ball norm before every branch (spec.BallPre: train -norm ball) in place
	// of the LayerNorms, or in invertible blocks where they have none; the measurements'
	// names then end in "+ball".
	Ball bool
	// L2Bound is the bound that contractive-l2 and invertible-l2 divide by when they are
	// not measured as their recipes (spec.Model.L2Bound, train -l2-bound); with product or
	// token2 their measurements' names end in "+product" or "+token2". The recipes divide
	// by token2.
	L2Bound ops.BoundForm
}

// Measurement is one timed program at one configuration: one JSON object of cmd/bench's
// output. bench/torch_ref.py prints the same fields for PyTorch (and a few of its own).
type Measurement struct {
	Impl           string  `json:"impl"`                  // go or torch
	Config         string  `json:"config"`                // preset name
	Arch           string  `json:"arch"`                  // model architecture; "+recipe" after it for a certified recipe (Settings.Recipe)
	Mode           string  `json:"mode"`                  // train, eval or sample
	Dtype          string  `json:"dtype"`                 // float32 or float64
	Backend        string  `json:"backend"`               // Go: the BLAS of the build (kernel.Backend); torch: its BLAS
	Threads        int     `json:"threads"`               // Go: GOMAXPROCS; torch: intra-op threads
	Batch          int     `json:"batch"`                 // sequences per run (for sample: decoded in step)
	Context        int     `json:"context"`               // T, positions per sequence
	Params         int     `json:"params"`                // scalar parameters of the model
	Steps          int     `json:"steps"`                 // timed runs
	Warmup         int     `json:"warmup"`                // untimed runs before them
	PowerIters     int     `json:"power_iters,omitempty"` // train: power-iteration steps before each training step
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
	GFLOP          float64 `json:"gflop"`                     // matrix-product GFLOP per run (model.CountFLOPs)
	GFLOPPerS      float64 `json:"gflop_per_s"`               // GFLOP / median time
	BytesPerStep   float64 `json:"bytes_per_step"`            // Go: heap bytes allocated per timed run
	AllocsPerStep  float64 `json:"allocs_per_step"`           // Go: heap objects allocated per timed run
	HeapLiveStart  uint64  `json:"heap_live_start"`           // Go: live heap bytes after warm-up (HeapAlloc after a full GC)
	HeapLiveEnd    uint64  `json:"heap_live_end"`             // Go: live heap bytes after the timed runs (HeapAlloc after a full GC)
	Checkpoint     string  `json:"checkpoint,omitempty"`      // Go: the file the weights came from (CheckpointJob), or "" for a fresh model
	Loss           float64 `json:"loss"`                      // loss of the last timed run (train, eval); torch mode loss: step 0
	LossAfterStep  float64 `json:"loss_after_step,omitempty"` // torch mode loss: after one training step
	SpeedupVsTrain float64 `json:"speedup_vs_train"`          // train ns/token over this ns/token (eval) or ns/gen (sample)
	GoVersion      string  `json:"go_version,omitempty"`      // Go runtime
	TorchVersion   string  `json:"torch_version,omitempty"`   // torch only
	InteropThreads int     `json:"interop_threads,omitempty"`
	BLASThreads    int     `json:"blas_threads,omitempty"`
	OMPWaitPolicy  string  `json:"omp_wait_policy,omitempty"`
	// Interleaved: timed in alternation with the other architectures of its configuration
	// (MeasureInterleaved); the live heap is then theirs together. PairedQ1, PairedMedian
	// and PairedQ3 are the quartiles over the rounds of its run time over PairedWith's in
	// the same round (the first architecture's; absent for that one).
	Interleaved  bool    `json:"interleaved,omitempty"`
	PairedWith   string  `json:"paired_with,omitempty"`
	PairedQ1     float64 `json:"paired_q1,omitempty"`
	PairedMedian float64 `json:"paired_median,omitempty"`
	PairedQ3     float64 `json:"paired_q3,omitempty"`
}

// NsPerGen is a sample measurement's median nanoseconds per generated token: Go's
// NsPerGenerated, PyTorch's one token per run; 0 for other modes.
func (r Measurement) NsPerGen() float64 {
	switch {
	case r.Mode != ModeSample:
		return 0
	case r.NsPerGenerated > 0:
		return r.NsPerGenerated
	case r.GeneratedPerS > 0:
		return 1e9 / r.GeneratedPerS
	}
	return 0
}

// NsPerUnit is the median ns per position (train, eval) or per generated token (sample):
// what a speedup over the training step compares.
func (r Measurement) NsPerUnit() float64 {
	if r.Mode == ModeSample {
		return r.NsPerGen()
	}
	return r.NsPerToken
}

// MsPerUnit is the median ms per run, or for sample per generated token (Go's sample runs
// generate several tokens, PyTorch's one): what a Go/PyTorch ratio compares.
func (r Measurement) MsPerUnit() float64 {
	if r.Mode == ModeSample {
		return r.NsPerGen() / 1e6
	}
	return r.MsMedian
}

// AddSpeedup sets an eval or sample measurement's speedup over the training step of the
// same implementation in seen (by mode), when there is one: the step's ns per position
// over eval's ns per position, or over sample's ns per generated token.
func (r *Measurement) AddSpeedup(seen map[string]Measurement) {
	t, ok := seen[ModeTrain]
	if !ok || r.Mode == ModeTrain {
		return
	}
	if ns := r.NsPerUnit(); ns > 0 {
		r.SpeedupVsTrain = t.NsPerToken / ns
	}
}

// Job is one (configuration, architecture) of a benchmark run, or one saved model
// (CheckpointJob).
type Job struct {
	Preset  model.Preset
	Cfg     model.Config
	Inputs  []int // (B*T)
	Targets []int // (B*T)
	Set     Settings
	// Checkpoint is the file whose weights the workloads start from (CheckpointJob), or ""
	// for a fresh model initialised from the seed.
	Checkpoint string
	step       *StepOptions // the checkpoint's training settings, or nil: stepOptions' defaults
}

// NewJob builds the configuration and the batch (model.RandomBatch) of a preset and
// architecture, as its certified recipe with s.Recipe, with s.Mix's mixing sub-blocks and,
// for an invertible architecture, s.Activation.
func NewJob(p model.Preset, arch spec.Arch, s Settings) Job {
	in, tg := model.RandomBatch(s.Seed, p.Batch, p.Context, p.Vocab)
	cfg := p.Config(arch, s.Dtype)
	if s.Recipe && arch == spec.InvertibleL2 && s.LipK > 0 {
		cfg.LipK, cfg.EmbedRadius, cfg.Tie = s.LipK, s.EmbedRadius, false
	}
	if s.Recipe && (arch == spec.ContractiveL2 || arch == spec.InvertibleL2) {
		if arch == spec.InvertibleL2 {
			cfg.Hidden = 0 // the preset's 4D, shared by the sub-blocks
		}
		cfg = cfg.WithCertifiedRecipe()
	}
	if !s.Recipe && (arch == spec.ContractiveL2 || arch == spec.InvertibleL2) {
		cfg.L2Bound = s.L2Bound
	}
	cfg.Mix = s.Mix
	if s.TokenBytes > 1 {
		cfg.TokenBytes, cfg.Tie = s.TokenBytes, false
	}
	if s.Ball {
		cfg.Norm = spec.BallPre
	}
	if arch.Invertible() {
		cfg.Activation = s.Activation
		if s.MLPBlocks > 0 {
			cfg.Hidden, cfg.MLPBlocks = 0, s.MLPBlocks // the preset's 4D, shared by the sub-blocks
		}
	}
	return Job{Preset: p, Cfg: cfg, Inputs: in, Targets: tg, Set: s}
}

// ArchName is the job's architecture as measurements name it: "+recipe" after it for a
// certified recipe or "+product" and "+token2" for those bounds, then "+kK" and "+rR" for
// a bound end to end and the token table's ball, and "+muon", "+mixK", "+mlpN", "+maxmin",
// "+tkN" and "+ball" for those settings.
func (j Job) ArchName() string {
	name := j.Cfg.Arch.String()
	if j.Set.Recipe && (j.Cfg.Arch == spec.ContractiveL2 || j.Cfg.Arch == spec.InvertibleL2) {
		name += "+recipe"
	}
	if !j.Set.Recipe && j.Set.L2Bound != ops.BoundKim && (j.Cfg.Arch == spec.ContractiveL2 || j.Cfg.Arch == spec.InvertibleL2) {
		name += "+" + j.Set.L2Bound.String()
	}
	if j.Cfg.LipK > 0 {
		name += fmt.Sprintf("+k%g", j.Cfg.LipK)
	}
	if j.Cfg.EmbedRadius > 0 {
		name += fmt.Sprintf("+r%g", j.Cfg.EmbedRadius)
	}
	if j.Set.Muon > 0 {
		name += "+muon"
	}
	if j.Set.Mix > 0 {
		name += fmt.Sprintf("+mix%d", j.Set.Mix)
	}
	if j.Set.MLPBlocks > 0 && j.Cfg.Arch.Invertible() {
		name += fmt.Sprintf("+mlp%d", j.Set.MLPBlocks)
	}
	if j.Cfg.MLPActivation() == ops.ActMaxMin {
		name += "+maxmin"
	}
	if j.Cfg.TokenBytes > 1 {
		name += fmt.Sprintf("+tk%d", j.Cfg.TokenBytes)
	}
	if j.Cfg.Norm == spec.BallPre {
		name += "+ball"
	}
	return name
}

// Measure times one mode of the job on its model (a fresh one, or the checkpoint's): the
// median, fastest and slowest of the timed runs after the warm-up, the allocations per
// run and the live heap around them.
func (j Job) Measure(mode string) (Measurement, error) {
	w, err := j.Workload(mode)
	if err != nil {
		return Measurement{}, j.errorf(mode, err)
	}
	defer w.Close()
	tm, err := timeRuns(j.Set.Warmup, j.Set.Steps, w.Run)
	if err != nil {
		return Measurement{}, j.errorf(mode, err)
	}
	return j.measurement(mode, w, tm)
}

// errorf names the job and mode in err.
func (j Job) errorf(mode string, err error) error {
	return fmt.Errorf("%s %s %s: %w", j.Preset.Name, j.Cfg.Arch, mode, err)
}

// measurement is the Measurement of the job's workload w in mode from its timing tm.
func (j Job) measurement(mode string, w *Workload, tm timing) (Measurement, error) {
	med := stats.Median(tm.durs).Seconds()
	gflop := w.FLOPs / 1e9
	r := Measurement{Impl: "go", Config: j.Preset.Name, Arch: j.ArchName(), Mode: mode, Dtype: j.Cfg.Dtype.String(), Backend: kernel.Backend,
		Threads: runtime.GOMAXPROCS(0), Batch: w.Batch, Context: j.Cfg.Context, Params: w.Params,
		Steps: j.Set.Steps, Warmup: j.Set.Warmup, MsMedian: 1e3 * med,
		MsMin: 1e3 * slices.Min(tm.durs).Seconds(), MsMax: 1e3 * slices.Max(tm.durs).Seconds(),
		Positions: w.Positions, GFLOP: gflop, GFLOPPerS: gflop / med,
		BytesPerStep: tm.bytes, AllocsPerStep: tm.allocs, HeapLiveStart: tm.heapStart, HeapLiveEnd: tm.heapEnd,
		Checkpoint: j.Checkpoint, GoVersion: runtime.Version()}
	if w.Loss != nil {
		var err error
		if r.Loss, err = w.Loss(); err != nil {
			return Measurement{}, j.errorf(mode, err)
		}
	}
	if mode == ModeTrain {
		r.PowerIters = j.stepOptions().iterations()
	}
	if mode == ModeSample {
		r.Generated, r.Window = w.Generated, j.Set.SampleWindow
		r.GeneratedPerS = float64(w.Generated) / med
		r.NsPerGenerated = 1e9 * med / float64(w.Generated)
	}
	r.TokensPerS = float64(r.Positions) / med
	r.NsPerToken = 1e9 * med / float64(r.Positions)
	return r, nil
}

// timing is what timeRuns measured.
type timing struct {
	durs               []time.Duration // of each timed run
	bytes, allocs      float64         // per timed run
	heapStart, heapEnd uint64          // live heap after warm-up and after the timed runs (settledHeap)
}

// timeRuns calls run warmup times, then steps times with each call timed, and counts the
// allocations of the timed calls (timeInterleaved of run alone). run gets the call's index
// from 0.
func timeRuns(warmup, steps int, run func(i int) error) (timing, error) {
	tms, _, err := timeInterleaved([]func(int) error{run}, warmup, steps)
	if err != nil {
		return timing{}, err
	}
	return tms[0], nil
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
