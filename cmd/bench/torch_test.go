package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"lipformer/layers"
	"lipformer/model"
)

// testRunner is the PyTorch reference as the tests run it (from cmd/bench), or a skip
// when Debian's Python cannot import torch.
func testRunner(t *testing.T) torchRunner {
	t.Helper()
	r := torchRunner{python: "/usr/bin/python3", script: "../../bench/torch_ref.py", threads: 1, interop: 1, blasThreads: 1, ompWait: "PASSIVE"}
	if err := exec.Command(r.python, "-c", "import torch, numpy").Run(); err != nil {
		t.Skipf("%s cannot import torch and numpy (%v): install Debian's python3-torch to run the PyTorch cross-check", r.python, err)
	}
	return r
}

// TestTorchLossEquality: a checkpoint written by Go, loaded by bench/torch_ref.py, gives
// the same loss on the same batch at step 0 and after one training step (forward,
// backward, clip, AdamW), for the toy configuration in both precisions.
func TestTorchLossEquality(t *testing.T) {
	r := testRunner(t)
	p, err := findPresets("tiny")
	if err != nil {
		t.Fatal(err)
	}
	for _, dtype := range []string{"float32", "float64"} {
		tol := 1e-4
		if dtype == "float64" {
			tol = 1e-10
		}
		for _, arch := range []string{"dp", "l2", "invertible-l2"} {
			t.Run(dtype+"/"+arch, func(t *testing.T) {
				j := newJob(p[0], arch, options{seed: 7, dtype: dtype, lossTol: tol, steps: 1})
				lc, ms, err := j.torchRun(context.Background(), r, t.TempDir(), nil)
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
	r := testRunner(t)
	p, err := findPresets("tiny")
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"contractive-l2", "invertible-l2"} {
		t.Run(arch, func(t *testing.T) {
			j := newJob(p[0], arch, options{seed: 3, dtype: "float64", lossTol: 1e-10, steps: 1})
			j.cfg.Std = 0.5
			m, err := model.New(j.cfg, j.opt.seed)
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
			lc, _, err := j.torchRun(context.Background(), r, t.TempDir(), nil)
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

// TestTorchRunTimes runs the -torch path end to end with one timed step.
func TestTorchRunTimes(t *testing.T) {
	r := testRunner(t)
	args := []string{"-configs", "tiny", "-archs", "l2", "-modes", "train,eval", "-steps", "1", "-warmup", "0", "-json",
		"-torch", "-torch-script", r.script, "-python", r.python, "-torch-threads", "1", "-torch-blas-threads", "1"}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	impls := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var rec struct {
			Impl string  `json:"impl"`
			GoMs float64 `json:"go_ms"`
			OK   bool    `json:"ok"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		impls[rec.Impl]++
		if rec.Impl == "loss-check" && !rec.OK {
			t.Errorf("loss check failed: %s", line)
		}
	}
	if want := map[string]int{"go": 2, "torch": 2, "compare": 2, "loss-check": 1}; !reflect.DeepEqual(impls, want) {
		t.Errorf("records %v, want %v:\n%s", impls, want, stdout.String())
	}
}

// TestTorchPresetsMatch: torch_ref.py's presets give the model configs of presets.go.
func TestTorchPresetsMatch(t *testing.T) {
	r := testRunner(t)
	archs := "dp,l2,invertible-l2"
	out, err := exec.Command(r.python, r.script, "presets", "--archs", archs, "--dtype", "float32").Output()
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
		p, err := findPresets(rec.Name)
		if err != nil {
			t.Fatalf("torch_ref.py has a preset Go lacks: %v", err)
		}
		raw, err := json.Marshal(p[0].config(rec.Arch, "float32"))
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if rec.Batch != p[0].Batch || !reflect.DeepEqual(rec.Config, want) {
			t.Errorf("%s %s: torch_ref.py has batch %d and config %v; presets.go %d and %v", rec.Name, rec.Arch, rec.Batch, rec.Config, p[0].Batch, want)
		}
		seen++
	}
	if want := len(presets()) * 3; seen != want {
		t.Errorf("torch_ref.py printed %d presets, want %d", seen, want)
	}
}
