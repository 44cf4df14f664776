package model_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"lipformer/bench"
	"lipformer/layers"
	"lipformer/model"
)

// torchScript is the PyTorch reference of the model, from this package's directory.
const torchScript = "../bench/torch_ref.py"

// torchRunner is the PyTorch reference as the tests run it, on one thread, or a skip when
// there is no python3 or it cannot import torch and numpy.
func torchRunner(t *testing.T) bench.Torch {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skipf("no python3 (%v): install Debian's python3-torch to run the PyTorch cross-check", err)
	}
	r := bench.Torch{Python: python, Script: torchScript, Threads: 1, Interop: 1, BLASThreads: 1, OMPWait: "PASSIVE"}
	if err := r.Check(context.Background()); err != nil {
		t.Skipf("%v: skipping the PyTorch cross-check", err)
	}
	return r
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
	for _, dtype := range []string{"float32", "float64"} {
		tol := 1e-4
		if dtype == "float64" {
			tol = 1e-10
		}
		for _, arch := range []string{"dp", "l2", "invertible-l2"} {
			t.Run(dtype+"/"+arch, func(t *testing.T) {
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
	for _, arch := range []string{"contractive-l2", "invertible-l2"} {
		t.Run(arch, func(t *testing.T) {
			j := bench.NewJob(p, arch, bench.Settings{Seed: 3, Dtype: "float64", Steps: 1})
			j.Cfg.Std = 0.5
			m, err := model.New(j.Cfg, j.Set.Seed)
			if err != nil {
				t.Fatal(err)
			}
			var attns []*layers.Attention
			for _, b := range m.Blocks {
				attns = append(attns, b.Attn)
			}
			for _, b := range m.Inv {
				attns = append(attns, b.Attn)
			}
			for _, a := range attns {
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
			Arch   string         `json:"arch"`
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
		raw, err := json.Marshal(p[0].Config(rec.Arch, "float32"))
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
