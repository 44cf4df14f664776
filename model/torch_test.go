package model_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"lipformer/bench"
	"lipformer/model"
	"lipformer/safetensors"
	"lipformer/spec"
)

// torchScript is the PyTorch reference of the model, from this package's directory.
const torchScript = "../bench/torch_ref.py"

// torchRunner is the PyTorch reference as the tests run it, on one thread: the first of
// Debian's /usr/bin/python3 (where python3-torch installs torch) and the python3 on the
// PATH that imports torch and numpy, or a skip when there is none.
func torchRunner(t *testing.T) bench.Torch {
	t.Helper()
	pythons := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil && p != pythons[0] {
		pythons = append(pythons, p)
	}
	var errs []string
	for _, python := range pythons {
		r := bench.Torch{Python: python, Script: torchScript, Threads: 1, Interop: 1, BLASThreads: 1, OMPWait: "PASSIVE"}
		err := r.Check(context.Background())
		if err == nil {
			return r
		}
		errs = append(errs, err.Error())
	}
	t.Skipf("skipping the PyTorch cross-check, no python3 imports torch: %s", strings.Join(errs, "; "))
	return bench.Torch{}
}

// tinyPreset is the toy reference configuration.
func tinyPreset(t *testing.T) model.Preset {
	t.Helper()
	p, err := model.FindPresets("tiny")
	if err != nil {
		t.Fatal(err)
	}
	return p[0]
}

// TestTorchLossEquality: a checkpoint written by Go, loaded by bench/torch_ref.py, gives
// the same loss on the same batch at step 0 and after one training step (forward,
// backward, clip, AdamW), for the toy configuration in both precisions.
func TestTorchLossEquality(t *testing.T) {
	r := torchRunner(t)
	p := tinyPreset(t)
	for _, dtype := range []spec.Dtype{spec.Float32, spec.Float64} {
		tol := 1e-4
		if dtype == spec.Float64 {
			tol = 1e-10
		}
		for _, arch := range []spec.Arch{spec.DP, spec.L2, spec.InvertibleL2} {
			t.Run(dtype.String()+"/"+arch.String(), func(t *testing.T) {
				j := bench.NewJob(p, arch, bench.Settings{Seed: 7, Dtype: dtype, Steps: 1})
				lc, ms, err := j.TorchRun(context.Background(), r, t.TempDir(), nil, tol)
				if err != nil {
					t.Fatal(err)
				}
				if len(ms) != 0 {
					t.Errorf("%d timings from the loss command", len(ms))
				}
				t.Logf("step 0: Go %.12f, PyTorch %.12f (|diff| %.2g); after a step: Go %.12f, PyTorch %.12f (|diff| %.2g)",
					lc.GoLoss, lc.TorchLoss, lc.AbsDiff, lc.GoLoss1, lc.TorchLoss1, lc.AbsDiff1)
				if !lc.OK {
					t.Errorf("losses differ by %.3g and %.3g, more than %g", lc.AbsDiff, lc.AbsDiff1, tol)
				}
				if !(lc.GoLoss1 < lc.GoLoss) {
					t.Errorf("the training step did not lower the loss: %v -> %v", lc.GoLoss, lc.GoLoss1)
				}
			})
		}
	}
}

// TestTorchLossEqualityActiveBound repeats the check with large initial weights, so that
// the contractive scale min(1, c / UB_inf) is below 1 and its gradient flows to the
// bound (at the default scale 0.02 the bound is below c and the scale is 1).
func TestTorchLossEqualityActiveBound(t *testing.T) {
	r := torchRunner(t)
	p := tinyPreset(t)
	for _, arch := range []spec.Arch{spec.ContractiveL2, spec.InvertibleL2} {
		t.Run(arch.String(), func(t *testing.T) {
			j := bench.NewJob(p, arch, bench.Settings{Seed: 3, Dtype: spec.Float64, Steps: 1})
			j.Cfg.Std = 0.5
			m, err := model.New(j.Cfg, j.Set.Seed)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range m.Attentions() {
				if s, err := a.Scale(); err != nil || !(s < 1) {
					t.Fatalf("contractive scale %v (%v), want below 1: the scale is not active", s, err)
				}
			}
			lc, _, err := j.TorchRun(context.Background(), r, t.TempDir(), nil, 1e-10)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("step 0: Go %.12f, PyTorch %.12f; after a step: Go %.12f, PyTorch %.12f", lc.GoLoss, lc.TorchLoss, lc.GoLoss1, lc.TorchLoss1)
			if !lc.OK {
				t.Errorf("losses differ by %.3g and %.3g", lc.AbsDiff, lc.AbsDiff1)
			}
		})
	}
}

// TestTorchPresetsMatch: torch_ref.py's presets give the model configs of Presets.
func TestTorchPresetsMatch(t *testing.T) {
	r := torchRunner(t)
	archs := "dp,l2,invertible-l2"
	out, err := exec.Command(r.Python, r.Script, "presets", "--archs", archs, "--dtype", "float32").Output()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var rec struct {
			Name   string         `json:"name"`
			Arch   spec.Arch      `json:"arch"`
			Batch  int            `json:"batch"`
			Config map[string]any `json:"config"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		p, err := model.FindPresets(rec.Name)
		if err != nil {
			t.Fatalf("torch_ref.py has a preset Go lacks: %v", err)
		}
		raw, err := json.Marshal(p[0].Config(rec.Arch, spec.Float32))
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if rec.Batch != p[0].Batch || !reflect.DeepEqual(rec.Config, want) {
			t.Errorf("%s %s: torch_ref.py has batch %d and config %v; model.Presets %d and %v", rec.Name, rec.Arch, rec.Batch, rec.Config, p[0].Batch, want)
		}
		seen++
	}
	if want := len(model.Presets()) * 3; seen != want {
		t.Errorf("torch_ref.py printed %d presets, want %d", seen, want)
	}
}

// TestTorchGradients checks every parameter's gradient of the toy configuration's loss
// against PyTorch's (torch_ref.py grads), tensor by tensor, as llm.c's test_gpt2.c does:
// the largest difference of each tensor within tol times its largest PyTorch entry, for
// every architecture in both precisions, at the default initial scale and at a large one,
// at which the contractive scale of the L2 attention is active.
func TestTorchGradients(t *testing.T) {
	r := torchRunner(t)
	p := tinyPreset(t)
	type gradCase struct {
		name string
		job  bench.Job
		tol  float64
		ckpt string // the checkpoint given to PyTorch
		out  string // the gradients it writes
	}
	var cases []gradCase
	dir := t.TempDir()
	for _, dtype := range []spec.Dtype{spec.Float32, spec.Float64} {
		tol := 1e-4
		if dtype == spec.Float64 {
			tol = 1e-10
		}
		for _, arch := range spec.Archs {
			for _, std := range []float64{0, 0.5} {
				c := gradCase{name: fmt.Sprintf("%s/%s/std=%g", dtype, arch, std), job: bench.NewJob(p, arch, bench.Settings{Seed: 11, Dtype: dtype}), tol: tol}
				if std > 0 {
					c.job.Cfg.Std = std
				}
				base := filepath.Join(dir, strings.ReplaceAll(c.name, "/", "_"))
				c.ckpt, c.out = base+".safetensors", base+".grads.safetensors"
				cases = append(cases, c)
			}
		}
	}
	var ckpts, outs []string
	models := make([]*model.Model, len(cases))
	for i, c := range cases {
		m, err := model.New(c.job.Cfg, c.job.Set.Seed)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.job.WriteCheckpoint(m, c.ckpt); err != nil {
			t.Fatal(err)
		}
		models[i], ckpts, outs = m, append(ckpts, c.ckpt), append(outs, c.out)
	}
	recs, err := r.Run(context.Background(), "grads", "--ckpt", strings.Join(ckpts, ","), "--out", strings.Join(outs, ","))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(cases) {
		t.Fatalf("torch_ref.py printed %d losses for %d checkpoints", len(recs), len(cases))
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) { compareGradients(t, models[i], c.job, recs[i].Loss, c.out, c.tol) })
	}
}

// compareGradients compares the gradients of a training program of m (fresh) on the
// batch of j with those PyTorch wrote to path for the loss torchLoss.
func compareGradients(t *testing.T, m *model.Model, j bench.Job, torchLoss float64, path string, tol float64) {
	t.Helper()
	ts, _, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]safetensors.Tensor{}
	for _, tt := range ts {
		want[tt.Name] = tt
	}
	prog, err := m.NewProgram(model.Train, j.Preset.Batch)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	copy(prog.Inputs, j.Inputs)
	copy(prog.Targets, j.Targets)
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	loss, err := prog.Loss()
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(torchLoss-loss) > tol*math.Abs(loss) {
		t.Errorf("loss: Go %v, PyTorch %v", loss, torchLoss)
	}
	if len(want) != len(prog.Params()) {
		t.Errorf("PyTorch has %d gradients, Go %d parameters", len(want), len(prog.Params()))
	}
	for i, prm := range prog.Params() {
		g, err := prog.Grad(i)
		if err != nil {
			t.Fatal(err)
		}
		w, ok := want[prm.Name]
		if !ok || !slices.Equal(w.Shape, []int(g.Shape())) {
			t.Errorf("%s: Go gradient %v, PyTorch's %v", prm.Name, g.Shape(), w.Shape)
			continue
		}
		got, ref := asFloat64s(t, g.Data()), tensorFloat64s(t, w)
		var diff, scale float64
		for k, v := range ref {
			diff, scale = max(diff, math.Abs(got[k]-v)), max(scale, math.Abs(v))
		}
		if !(diff <= tol*scale) {
			t.Errorf("%s: largest |Go - PyTorch| %.3g, more than %g times its largest entry %.3g", prm.Name, diff, tol, scale)
		}
	}
}

// asFloat64s is a float32 or float64 slice as float64s.
func asFloat64s(t *testing.T, data any) []float64 {
	t.Helper()
	switch d := data.(type) {
	case []float64:
		return d
	case []float32:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v)
		}
		return out
	}
	t.Fatalf("data of type %T", data)
	return nil
}

// tensorFloat64s is the F32 or F64 data of a safetensors tensor as float64s.
func tensorFloat64s(t *testing.T, tt safetensors.Tensor) []float64 {
	t.Helper()
	if d, err := safetensors.Data[float64](tt); err == nil {
		return d
	}
	d, err := safetensors.Data[float32](tt)
	if err != nil {
		t.Fatalf("%s: %v", tt.Name, err)
	}
	return asFloat64s(t, d)
}
