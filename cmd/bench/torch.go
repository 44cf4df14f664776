package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"lipformer/model"
	"lipformer/safetensors"
	"lipformer/train"
)

// What a benchmark checkpoint adds to a model checkpoint (model.Save) for
// bench/torch_ref.py: the batch and the optimizer settings, so that both sides train the
// same weights on the same batch in the same way.
const (
	metaBenchConfig  = "bench.config"  // preset name
	metaBenchOptions = "bench.options" // JSON benchOptions
	tensorInputs     = "bench.inputs"  // (B, T) I64 token ids
	tensorTargets    = "bench.targets" // (B, T) I64 next-token ids
)

// benchOptions are the optimizer settings of a timed training step: train.DefaultOptions'
// peak learning rate (constant), Adam settings and clip.
type benchOptions struct {
	LR          float64 `json:"lr"`
	Beta1       float64 `json:"beta1"`
	Beta2       float64 `json:"beta2"`
	Eps         float64 `json:"eps"`
	WeightDecay float64 `json:"weight_decay"`
	Clip        float64 `json:"clip"`
	Seed        uint64  `json:"seed"`
}

// defaultBenchOptions are the settings timeTrain uses.
func defaultBenchOptions(seed uint64) benchOptions {
	o := train.DefaultOptions()
	a := o.AdamConfig()
	return benchOptions{LR: o.LR, Beta1: a.Beta1, Beta2: a.Beta2, Eps: a.Eps, WeightDecay: a.WeightDecay, Clip: o.Clip, Seed: seed}
}

// adam is the optimizer configuration of the options.
func (o benchOptions) adam() train.AdamConfig {
	return train.AdamConfig{Beta1: o.Beta1, Beta2: o.Beta2, Eps: o.Eps, WeightDecay: o.WeightDecay}
}

// writeCheckpoint saves m with the job's batch and optimizer settings to path. The
// vocabulary is the identity (token i is byte i).
func writeCheckpoint(m *model.Model, j job, path string) error {
	vocab := make([]byte, m.Cfg.Vocab)
	for i := range vocab {
		vocab[i] = byte(i)
	}
	in, tg := make([]int64, len(j.inputs)), make([]int64, len(j.targets))
	for i := range in {
		in[i], tg[i] = int64(j.inputs[i]), int64(j.targets[i])
	}
	opts, err := json.Marshal(defaultBenchOptions(j.opt.seed))
	if err != nil {
		return err
	}
	shape := []int{j.p.Batch, j.cfg.Context}
	extra := []safetensors.Tensor{safetensors.New(tensorInputs, shape, in), safetensors.New(tensorTargets, shape, tg)}
	return m.Save(path, vocab, extra, map[string]string{metaBenchConfig: j.p.Name, metaBenchOptions: string(opts)})
}

// torchRunner runs bench/torch_ref.py.
type torchRunner struct {
	python      string // an interpreter that can import torch (Debian's /usr/bin/python3 with python3-torch)
	script      string // path of torch_ref.py
	threads     int    // torch.set_num_threads
	interop     int    // torch.set_num_interop_threads
	blasThreads int    // OPENBLAS_NUM_THREADS of torch's OpenBLAS
	ompWait     string // OMP_WAIT_POLICY of torch's OpenMP pool
}

// check fails with advice when the interpreter cannot import torch or the script is missing.
func (r torchRunner) check(ctx context.Context) error {
	if _, err := os.Stat(r.script); err != nil {
		return fmt.Errorf("-torch-script: %w (run from the repository root or pass the path of bench/torch_ref.py)", err)
	}
	out, err := exec.CommandContext(ctx, r.python, "-c", "import torch, numpy").CombinedOutput()
	if err != nil {
		return fmt.Errorf("-python %s cannot import torch and numpy (install Debian's python3-torch: apt-get install python3-torch): %v: %s",
			r.python, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// run runs the script's command with args and parses its JSON lines: measurements, or
// (mode "loss") the loss of the checkpoint's batch.
func (r torchRunner) run(ctx context.Context, command string, args ...string) ([]measurement, error) {
	all := append([]string{r.script, command,
		"--threads", strconv.Itoa(r.threads), "--interop-threads", strconv.Itoa(r.interop),
		"--blas-threads", strconv.Itoa(r.blasThreads), "--omp-wait-policy", r.ompWait}, args...)
	cmd := exec.CommandContext(ctx, r.python, all...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w\n%s", r.python, strings.Join(all, " "), err, tail(stderr.String(), 2000))
	}
	var recs []measurement
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec measurement
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

// lossCheck compares Go and PyTorch on the job's batch: the loss of training step 0 (the
// fresh model), which checks the forward pass, and the loss after one training step,
// which checks the gradients, the clip and the AdamW update too.
type lossCheck struct {
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

// comparison is the ratio of the Go and PyTorch median times of one mode.
type comparison struct {
	Impl    string  `json:"impl"` // "compare"
	Config  string  `json:"config"`
	Arch    string  `json:"arch"`
	Mode    string  `json:"mode"`
	GoMs    float64 `json:"go_ms"`
	TorchMs float64 `json:"torch_ms"`
	Ratio   float64 `json:"go_over_torch"` // GoMs / TorchMs: how many times slower Go is
}

// torchRun writes a checkpoint of the fresh model of j to dir, computes the Go loss of its
// batch, and runs torch_ref.py on it: the loss check and, for the given modes (none: the
// loss only), PyTorch's timings of the same weights, batch and optimizer settings.
func (j job) torchRun(ctx context.Context, r torchRunner, dir string, modes []string) (lossCheck, []measurement, error) {
	m, err := model.New(j.cfg, j.opt.seed)
	if err != nil {
		return lossCheck{}, nil, err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s_%s_%s.safetensors", j.p.Name, j.cfg.Arch, j.cfg.Dtype))
	if err := writeCheckpoint(m, j, path); err != nil {
		return lossCheck{}, nil, err
	}
	gl, err := goLoss(m, j)
	if err != nil {
		return lossCheck{}, nil, err
	}
	gl1, err := goLossAfterStep(m, j)
	if err != nil {
		return lossCheck{}, nil, err
	}
	args := []string{"--ckpt", path, "--after-step"}
	command := "loss"
	if len(modes) > 0 {
		command = "run"
		args = append(args, "--steps", strconv.Itoa(j.opt.steps), "--warmup", strconv.Itoa(j.opt.warmup), "--modes", strings.Join(modes, ","))
	}
	recs, err := r.run(ctx, command, args...)
	if err != nil {
		return lossCheck{}, nil, err
	}
	lc := lossCheck{Impl: "loss-check", Config: j.p.Name, Arch: j.cfg.Arch, Dtype: j.cfg.Dtype, GoLoss: gl, GoLoss1: gl1,
		TorchLoss: math.NaN(), TorchLoss1: math.NaN(), Tol: j.opt.lossTol}
	var ms []measurement
	for _, rec := range recs {
		if rec.Mode == "loss" {
			lc.TorchLoss, lc.TorchLoss1 = rec.Loss, rec.LossAfterStep
			continue
		}
		fl, err := countFLOPs(j.cfg, rec.Batch)
		if err != nil {
			return lossCheck{}, nil, err
		}
		rec.GFLOP = fl.Forward / 1e9
		if rec.Mode == modeTrain {
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
