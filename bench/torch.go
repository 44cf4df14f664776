package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"lipformer/model"
	"lipformer/safetensors"
	"lipformer/spec"
	"lipformer/train"
)

// What a benchmark checkpoint adds to a model checkpoint (model.Save) for
// bench/torch_ref.py: the batch and the optimizer settings, so that both sides train the
// same weights on the same batch in the same way.
const (
	metaBenchConfig  = "bench.config"  // preset name
	metaBenchOptions = "bench.options" // JSON StepOptions
	tensorInputs     = "bench.inputs"  // (B, T) I64 token ids
	tensorTargets    = "bench.targets" // (B, T) I64 next-token ids
)

// StepOptions are the settings of a timed training step: train.DefaultOptions' peak
// learning rate (constant), Adam settings, clip and power iterations per step.
type StepOptions struct {
	LR          float64 `json:"lr"`
	Beta1       float64 `json:"beta1"`
	Beta2       float64 `json:"beta2"`
	Eps         float64 `json:"eps"`
	WeightDecay float64 `json:"weight_decay"`
	Clip        float64 `json:"clip"`
	Seed        uint64  `json:"seed"`
	Muon        float64 `json:"muon,omitempty"` // Muon's learning-rate scale for the blocks' matrices; 0: AdamW for all
	// PowerIters is the number of power-iteration steps that refresh the spectral
	// normalisations and token-norm bounds before each step (train.StepConfig); 0 means 1.
	PowerIters int `json:"power_iters,omitempty"`
}

// DefaultStepOptions are the settings the train mode uses, those of a training run
// (train.DefaultOptions: its eight power iterations per step included), with AdamW for
// every parameter.
func DefaultStepOptions(seed uint64) StepOptions {
	o := train.DefaultOptions()
	o.Seed = seed
	return stepOptionsOf(o)
}

// stepOptionsOf are the settings of a training step of the run options o, at their peak
// learning rate.
func stepOptionsOf(o train.Options) StepOptions {
	a := o.AdamConfig()
	return StepOptions{LR: o.LR, Beta1: a.Beta1, Beta2: a.Beta2, Eps: a.Eps, WeightDecay: a.WeightDecay, Clip: o.Clip, Seed: o.Seed,
		Muon: o.Muon, PowerIters: o.PowerIters}
}

// iterations is the number of power-iteration steps the options take before a training
// step: PowerIters, of which 0 means 1 (train.StepConfig).
func (o StepOptions) iterations() int { return max(1, o.PowerIters) }

// StepConfig is the training step of the options (train.Stepper).
func (o StepOptions) StepConfig() train.StepConfig {
	return train.StepConfig{Adam: o.adam(), Clip: o.Clip, Seed: o.Seed, PowerIters: o.PowerIters}
}

// stepOptions are the job's training settings: a checkpoint's (CheckpointJob), or
// DefaultStepOptions with the job's Muon and power iterations.
func (j Job) stepOptions() StepOptions {
	if j.step != nil {
		return *j.step
	}
	o := DefaultStepOptions(j.Set.Seed)
	o.Muon = j.Set.Muon
	if j.Set.PowerIters > 0 {
		o.PowerIters = j.Set.PowerIters
	}
	return o
}

// adam is the optimizer configuration of the options.
func (o StepOptions) adam() train.AdamConfig {
	return train.AdamConfig{Beta1: o.Beta1, Beta2: o.Beta2, Eps: o.Eps, WeightDecay: o.WeightDecay, Muon: o.Muon}
}

// WriteCheckpoint saves m with the job's batch and optimizer settings to path, for
// bench/torch_ref.py. The vocabulary is the identity (token i is byte i).
func (j Job) WriteCheckpoint(m *model.Model, path string) error {
	vocab := make([]byte, m.Cfg.Vocab)
	for i := range vocab {
		vocab[i] = byte(i)
	}
	in, tg := make([]int64, len(j.Inputs)), make([]int64, len(j.Targets))
	for i := range in {
		in[i], tg[i] = int64(j.Inputs[i]), int64(j.Targets[i])
	}
	opts, err := json.Marshal(j.stepOptions())
	if err != nil {
		return err
	}
	shape := []int{j.Preset.Batch, j.Cfg.Context}
	extra := []safetensors.Tensor{safetensors.New(tensorInputs, shape, in), safetensors.New(tensorTargets, shape, tg)}
	return m.Save(path, vocab, extra, map[string]string{metaBenchConfig: j.Preset.Name, metaBenchOptions: string(opts)})
}

// Torch runs bench/torch_ref.py.
type Torch struct {
	Python      string // an interpreter that can import torch (Debian's /usr/bin/python3 with python3-torch)
	Script      string // path of torch_ref.py
	Threads     int    // torch.set_num_threads
	Interop     int    // torch.set_num_interop_threads
	BLASThreads int    // OPENBLAS_NUM_THREADS of torch's OpenBLAS
	OMPWait     string // OMP_WAIT_POLICY of torch's OpenMP pool: PASSIVE or ACTIVE
}

// Check fails with advice when the interpreter cannot import torch and numpy; the error
// begins with the interpreter's path.
func (r Torch) Check(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, r.Python, "-c", "import torch, numpy").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s cannot import torch and numpy (install Debian's python3-torch: apt-get install python3-torch): %v: %s",
			r.Python, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Run runs the script's command with args and parses its JSON lines: measurements, or
// (mode "loss") the loss of the checkpoint's batch.
func (r Torch) Run(ctx context.Context, command string, args ...string) ([]Measurement, error) {
	all := append([]string{r.Script, command,
		"--threads", strconv.Itoa(r.Threads), "--interop-threads", strconv.Itoa(r.Interop),
		"--blas-threads", strconv.Itoa(r.BLASThreads), "--omp-wait-policy", r.OMPWait}, args...)
	cmd := exec.CommandContext(ctx, r.Python, all...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w\n%s", r.Python, strings.Join(all, " "), err, tail(stderr.String(), 2000))
	}
	var recs []Measurement
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec Measurement
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("torch_ref.py printed %q: %w", line, err)
		}
		recs = append(recs, rec)
	}
	return recs, sc.Err()
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// LossCheck compares Go and PyTorch on the job's batch: the loss of training step 0 (the
// fresh model), which checks the forward pass, and the loss after one training step,
// which checks the gradients, the clip and the AdamW update too.
type LossCheck struct {
	Impl       string  `json:"impl"` // "loss-check"
	Config     string  `json:"config"`
	Arch       string  `json:"arch"`
	Dtype      string  `json:"dtype"`
	GoLoss     float64 `json:"go_loss"`
	TorchLoss  float64 `json:"torch_loss"`
	AbsDiff    float64 `json:"abs_diff"`
	GoLoss1    float64 `json:"go_loss_after_step"`
	TorchLoss1 float64 `json:"torch_loss_after_step"`
	AbsDiff1   float64 `json:"abs_diff_after_step"`
	Tol        float64 `json:"tol"`
	OK         bool    `json:"ok"` // both differences within Tol
}

// Comparison is the ratio of the Go and PyTorch median times of one mode.
type Comparison struct {
	Impl    string  `json:"impl"` // "compare"
	Config  string  `json:"config"`
	Arch    string  `json:"arch"`
	Mode    string  `json:"mode"`
	GoMs    float64 `json:"go_ms"`
	TorchMs float64 `json:"torch_ms"`
	Ratio   float64 `json:"go_over_torch"` // GoMs / TorchMs: how many times slower Go is
}

// Compare is the Comparison of a Go and a PyTorch measurement of the same mode.
func Compare(goRun, torchRun Measurement) Comparison {
	goMs, torchMs := goRun.MsPerUnit(), torchRun.MsPerUnit()
	return Comparison{Impl: "compare", Config: goRun.Config, Arch: goRun.Arch, Mode: goRun.Mode,
		GoMs: goMs, TorchMs: torchMs, Ratio: goMs / torchMs}
}

// TorchRun is TorchRunModel on the job's model (a fresh one, or the checkpoint's).
func (j Job) TorchRun(ctx context.Context, r Torch, dir string, modes []string, tol float64) (LossCheck, []Measurement, error) {
	m, err := j.newModel()
	if err != nil {
		return LossCheck{}, nil, err
	}
	return j.TorchRunModel(ctx, r, m, dir, modes, tol)
}

// TorchRunModel writes a checkpoint of m, a model of the job's config, to dir, computes
// the Go loss of the job's batch before and after one training step (which changes m),
// and runs torch_ref.py on the checkpoint: the loss check within tol and, for the given
// modes (none: the loss only), PyTorch's timings of the same weights, batch and optimizer
// settings (Set.Steps, Set.Warmup). Both are named by the job's ArchName, as its Go
// measurements are.
func (j Job) TorchRunModel(ctx context.Context, r Torch, m *model.Model, dir string, modes []string, tol float64) (LossCheck, []Measurement, error) {
	if m.Cfg != j.Cfg.Built() {
		return LossCheck{}, nil, fmt.Errorf("torch run: a model of config %+v for a job of %+v", m.Cfg, j.Cfg.Built())
	}
	path := filepath.Join(dir, fmt.Sprintf("%s_%s_%s.safetensors", j.Preset.Name, j.ArchName(), j.Cfg.Dtype))
	if err := j.WriteCheckpoint(m, path); err != nil {
		return LossCheck{}, nil, err
	}
	gl, err := j.loss(m)
	if err != nil {
		return LossCheck{}, nil, err
	}
	gl1, err := j.lossAfterStep(m)
	if err != nil {
		return LossCheck{}, nil, err
	}
	args := []string{"--ckpt", path, "--after-step"}
	command := "loss"
	if len(modes) > 0 {
		command = "run"
		args = append(args, "--steps", strconv.Itoa(j.Set.Steps), "--warmup", strconv.Itoa(j.Set.Warmup), "--modes", strings.Join(modes, ","))
	}
	recs, err := r.Run(ctx, command, args...)
	if err != nil {
		return LossCheck{}, nil, err
	}
	lc := LossCheck{Impl: "loss-check", Config: j.Preset.Name, Arch: j.ArchName(), Dtype: j.Cfg.Dtype.String(), GoLoss: gl, GoLoss1: gl1,
		TorchLoss: math.NaN(), TorchLoss1: math.NaN(), Tol: tol}
	var ms []Measurement
	for _, rec := range recs {
		if rec.Mode == "loss" {
			lc.TorchLoss, lc.TorchLoss1 = rec.Loss, rec.LossAfterStep
			continue
		}
		rec.Arch = j.ArchName() // torch_ref.py names the architecture alone
		fl, err := model.CountFLOPs(j.Cfg, rec.Batch)
		if err != nil {
			return LossCheck{}, nil, err
		}
		rec.GFLOP = fl.Forward / 1e9
		if rec.Mode == ModeTrain {
			rec.GFLOP = fl.Train / 1e9
		}
		rec.GFLOPPerS = rec.GFLOP / (rec.MsMedian / 1e3)
		ms = append(ms, rec)
	}
	lc.AbsDiff, lc.AbsDiff1 = math.Abs(lc.GoLoss-lc.TorchLoss), math.Abs(lc.GoLoss1-lc.TorchLoss1)
	lc.OK = lc.AbsDiff <= lc.Tol && lc.AbsDiff1 <= lc.Tol // false for NaN
	if math.IsNaN(lc.TorchLoss) {
		return lc, ms, fmt.Errorf("torch_ref.py printed no loss for %s", path)
	}
	return lc, ms, nil
}

// lossAfterStep is the loss of the job's batch after one training step on it from m's
// current weights (which it changes), with the train mode's settings.
func (j Job) lossAfterStep(m *model.Model) (float64, error) {
	var err error
	if j.Cfg.Dtype == spec.Float64 {
		err = oneStep[float64](m, j)
	} else {
		err = oneStep[float32](m, j)
	}
	if err != nil {
		return 0, err
	}
	return j.loss(m)
}

// oneStep takes training step 0 on the job's batch.
func oneStep[T train.Float](m *model.Model, j Job) error {
	st, lr, err := jobStepper[T](m, j)
	if err != nil {
		return err
	}
	defer st.Close()
	_, _, err = st.Step(0, lr)
	return err
}

// loss is the loss of the job's batch under m's current weights (an Eval program): the
// loss of training step 0 when m is fresh.
func (j Job) loss(m *model.Model) (float64, error) {
	p, err := m.NewProgram(model.Eval, j.Preset.Batch)
	if err != nil {
		return 0, err
	}
	defer p.Close()
	copy(p.Inputs, j.Inputs)
	copy(p.Targets, j.Targets)
	if err := p.Run(); err != nil {
		return 0, err
	}
	return p.Loss()
}
