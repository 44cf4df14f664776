package model_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"lipformer/bench"
	"lipformer/model"
	"lipformer/ops"
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
// backward, clip, AdamW), for the toy configuration in both precisions: plain
// architectures, and the certified recipes of contractive-l2 and invertible-l2 with their
// temperatures, position biases and MLP gains moved off their initial values
// (perturbScalars), so that the step-0 loss depends on them and weight decay would move
// them; and dp and the invertible recipe with the blocks' matrices stepped by Muon (its
// Newton-Schulz iteration, step scale and weight decay: a first step does not see the
// momentum, which train's tests check against a gonum transcription), once with a mixing
// sub-block of four taps, and once with MaxMin in the MLP branches; the invertible recipe
// bounded end to end (lip_k: the final ball norm and the normalised head, with the token
// table's rows in a ball of about their own norm, so that some are projected); and dp with
// three-byte tokens and the bounded recipe with two-byte tokens.
func TestTorchLossEquality(t *testing.T) {
	r := torchRunner(t)
	p := tinyPreset(t)
	for _, dtype := range []spec.Dtype{spec.Float32, spec.Float64} {
		tol := 1e-4
		if dtype == spec.Float64 {
			tol = 1e-10
		}
		for _, c := range []struct {
			arch   spec.Arch
			recipe bool
			muon   float64
			mix    int
			act    string
			lipK   float64
			tk     int
		}{{spec.DP, false, 0, 0, "", 0, 0}, {spec.L2, false, 0, 0, "", 0, 0}, {spec.InvertibleL2, false, 0, 0, "", 0, 0}, {spec.ContractiveL2, true, 0, 0, "", 0, 0}, {spec.InvertibleL2, true, 0, 0, "", 0, 0},
			{spec.DP, false, 10, 0, "", 0, 0}, {spec.InvertibleL2, true, 10, 0, "", 0, 0}, {spec.InvertibleL2, true, 10, 4, "", 0, 0}, {spec.InvertibleL2, true, 0, 0, "maxmin", 0, 0},
			{spec.InvertibleL2, true, 0, 0, "", 10, 0}, {spec.DP, false, 0, 0, "", 0, 3}, {spec.InvertibleL2, true, 0, 0, "", 10, 2}} {
			set := bench.Settings{Seed: 7, Dtype: dtype, Steps: 1, Recipe: c.recipe, Muon: c.muon, LipK: c.lipK, TokenBytes: c.tk}
			if c.lipK > 0 {
				set.EmbedRadius = 0.08 // the tiny preset's rows: 0.02 sqrt(16)
			}
			j := bench.NewJob(p, c.arch, set)
			j.Cfg.Mix, j.Cfg.Activation = c.mix, c.act
			name := j.ArchName()
			if c.mix > 0 {
				name += fmt.Sprintf("+mix%d", c.mix)
			}
			if c.act != "" {
				name += "+" + c.act
			}
			t.Run(dtype.String()+"/"+name, func(t *testing.T) {
				m, err := model.New(j.Cfg, j.Set.Seed)
				if err != nil {
					t.Fatal(err)
				}
				perturbScalars(t, m, 5)
				lc, ms, err := j.TorchRunModel(context.Background(), r, m, t.TempDir(), nil, tol)
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
// the contractive scale min(1, c / UB) is below 1 and its gradient flows to the bound (at
// the default scale 0.02 the bound is below c and the scale is 1): under Kim et al.'s
// bound, the product bound and the certified recipes (the token2 bound), from the fresh
// model.
func TestTorchLossEqualityActiveBound(t *testing.T) {
	r := torchRunner(t)
	p := tinyPreset(t)
	for _, arch := range []spec.Arch{spec.ContractiveL2, spec.InvertibleL2} {
		for _, c := range []struct {
			recipe bool
			bound  ops.BoundForm
		}{{false, ops.BoundKim}, {false, ops.BoundProduct}, {true, ops.BoundKim}} {
			j := bench.NewJob(p, arch, bench.Settings{Seed: 3, Dtype: spec.Float64, Steps: 1, Recipe: c.recipe, L2Bound: c.bound})
			t.Run(j.ArchName(), func(t *testing.T) {
				j.Cfg.Std = 0.5
				m, err := model.New(j.Cfg, j.Set.Seed)
				if err != nil {
					t.Fatal(err)
				}
				requireActiveScale(t, m)
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
}

// requireActiveScale fails the test unless the contractive scale of every attention layer
// of m is below 1.
func requireActiveScale(t *testing.T, m *model.Model) {
	t.Helper()
	for _, a := range m.Attentions() {
		if s, err := a.Scale(); err != nil || !(s < 1) {
			t.Fatalf("contractive scale %v (%v), want below 1: the scale is not active", s, err)
		}
	}
}

// perturbScalars moves the scalars of the certified recipes off their initial values, by
// draws from [-1/2, 1/2) of a generator seeded with seed: every entry of the attention
// temperatures (initially 0), position biases (0), MLP log gains (log mlp_gain) and the
// mixing sub-blocks' taps (0). A model without them is unchanged.
func perturbScalars(t *testing.T, m *model.Model, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0))
	for _, p := range m.Params() {
		if !strings.HasSuffix(p.Name, ".logtemp") && !strings.HasSuffix(p.Name, ".posbias") && !strings.HasSuffix(p.Name, ".loggain") && !strings.HasSuffix(p.Name, ".taps") && !strings.HasSuffix(p.Name, ".logradius") {
			continue
		}
		switch d := p.Value.Data().(type) {
		case []float32:
			for i := range d {
				d[i] += float32(rng.Float64() - 0.5)
			}
		case []float64:
			for i := range d {
				d[i] += rng.Float64() - 0.5
			}
		default:
			t.Fatalf("%s holds %T", p.Name, d)
		}
	}
}

// TestTorchRefusesUnsupported: torch_ref.py refuses, naming the option, a checkpoint whose
// config has an option it does not implement, rather than computing another model.
func TestTorchRefusesUnsupported(t *testing.T) {
	r := torchRunner(t)
	p := tinyPreset(t)
	for _, c := range []struct {
		name, want string
		arch       spec.Arch
		set        func(*spec.Model)
	}{
		{"dropout", "dropout 0.1", spec.DP, func(c *spec.Model) { c.Dropout = 0.1 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := bench.NewJob(p, c.arch, bench.Settings{Seed: 1, Dtype: spec.Float64})
			c.set(&j.Cfg)
			m, err := model.New(j.Cfg, j.Set.Seed)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "m.safetensors")
			if err := j.WriteCheckpoint(m, path); err != nil {
				t.Fatal(err)
			}
			_, err = r.Run(context.Background(), "loss", "--ckpt", path)
			if err == nil || !strings.Contains(err.Error(), "does not implement") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("torch_ref.py on a checkpoint with %s: %v, want a refusal naming it", c.want, err)
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
// the largest difference of each tensor within tol times its largest PyTorch entry, in
// both precisions, at the default initial scale and at a large one, at which the
// contractive scale of the L2 attention is active. The models are every architecture,
// the certified recipes of contractive-l2 and invertible-l2, and the recipes' options
// alone or with other settings (temperatures under Kim et al.'s bound, the product bound
// with temperatures and on invertible-l2, temperatures and
// position bias without a contraction, MLP gain and two MLP sub-blocks on the dp
// control, the invertible recipe bounded end to end with its token table in a ball, dp
// with three-byte tokens, and both recipes with ball norms before their branches), their
// scalars moved off their initial values (perturbScalars).
func TestTorchGradients(t *testing.T) {
	r := torchRunner(t)
	p := tinyPreset(t)
	type variant struct {
		arch   spec.Arch
		recipe bool
		name   string            // "" for the architecture's or recipe's name
		set    func(*spec.Model) // options on top, or nil
	}
	var variants []variant
	for _, arch := range spec.Archs {
		variants = append(variants, variant{arch: arch})
	}
	variants = append(variants,
		variant{arch: spec.ContractiveL2, recipe: true},
		variant{arch: spec.InvertibleL2, recipe: true},
		variant{arch: spec.ContractiveL2, name: "contractive-l2+temp", set: func(c *spec.Model) { c.L2Temp = true }},
		variant{arch: spec.ContractiveL2, name: "contractive-l2+product+temp", set: func(c *spec.Model) { c.L2Bound, c.L2Temp = ops.BoundProduct, true }},
		variant{arch: spec.InvertibleL2, name: "invertible-l2+product", set: func(c *spec.Model) { c.L2Bound = ops.BoundProduct }},
		variant{arch: spec.L2, name: "l2+temp+posbias", set: func(c *spec.Model) { c.L2Temp, c.L2PosBias = true, true }},
		variant{arch: spec.InvertibleDP, name: "invertible-dp+gain+2mlps", set: func(c *spec.Model) { c.MLPGain, c.MLPBlocks = 4, 2 }},
		variant{arch: spec.DP, name: "dp+mix", set: func(c *spec.Model) { c.Mix = 3 }},
		variant{arch: spec.InvertibleL2, recipe: true, name: "invertible-l2-recipe+mix", set: func(c *spec.Model) { c.Mix = 4 }},
		variant{arch: spec.InvertibleL2, recipe: true, name: "invertible-l2-recipe+k10+r0.08", set: func(c *spec.Model) { c.LipK, c.EmbedRadius, c.Tie = 10, 0.08, false }},
		variant{arch: spec.DP, name: "dp+tk3", set: func(c *spec.Model) { c.TokenBytes, c.Tie = 3, false }},
		variant{arch: spec.InvertibleL2, recipe: true, name: "invertible-l2-recipe+ball", set: func(c *spec.Model) { c.Norm = spec.BallPre }},
		variant{arch: spec.ContractiveL2, recipe: true, name: "contractive-l2-recipe+ball", set: func(c *spec.Model) { c.Norm = spec.BallPre }},
	)
	type gradCase struct {
		name string
		job  bench.Job
		tol  float64
		// active: the contractive scale of every attention layer must be below 1 (a
		// contractive tied L2 model at the large initial scale)
		active bool
		ckpt   string // the checkpoint given to PyTorch
		out    string // the gradients it writes
	}
	var cases []gradCase
	dir := t.TempDir()
	for _, dtype := range []spec.Dtype{spec.Float32, spec.Float64} {
		tol := 1e-4
		if dtype == spec.Float64 {
			tol = 1e-10
		}
		for _, v := range variants {
			for _, std := range []float64{0, 0.5} {
				j := bench.NewJob(p, v.arch, bench.Settings{Seed: 11, Dtype: dtype, Recipe: v.recipe})
				name := v.name
				if name == "" {
					name = j.ArchName()
				}
				if v.set != nil {
					v.set(&j.Cfg)
				}
				if std > 0 {
					j.Cfg.Std = std
				}
				c := gradCase{name: fmt.Sprintf("%s/%s/std=%g", dtype, name, std), job: j, tol: tol,
					active: std > 0 && j.Cfg.Contraction() > 0 && j.Cfg.Arch.TiedL2()}
				base := filepath.Join(dir, strings.ReplaceAll(strings.ReplaceAll(c.name, "/", "_"), "+", "_"))
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
		perturbScalars(t, m, uint64(i))
		if c.active {
			requireActiveScale(t, m)
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
// batch of j with those PyTorch wrote to path for the loss torchLoss: the largest
// difference of each tensor within tol times its scale, its largest PyTorch entry. In
// The scale of a temperature's or an MLP gain's gradient is at least its largest part (the
// metadata "parts" of torch_ref.py grads): the gradient sums parts that cancel, to 1e-4 of
// them and below on the toy models, and carries their rounding, in Go as in PyTorch. In
// float32 that rounding is near tol; in float64 it matters only where the parts cancel
// by more than 1e5 (contractive-l2's recipe with ball norms: a temperature's gradient
// 1.2e-13 of parts 2.4e-8, Go and PyTorch 2e-23 apart, under an ulp of the parts).
func compareGradients(t *testing.T, m *model.Model, j bench.Job, torchLoss float64, path string, tol float64) {
	t.Helper()
	ts, meta, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var parts map[string]float64
	if err := json.Unmarshal([]byte(meta["parts"]), &parts); err != nil {
		t.Fatalf("%s: parts %q: %v", path, meta["parts"], err)
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
		diff, scale := 0.0, parts[prm.Name]
		for k, v := range ref {
			diff, scale = max(diff, math.Abs(got[k]-v)), max(scale, math.Abs(v))
		}
		if !(diff <= tol*scale) {
			t.Errorf("%s: largest |Go - PyTorch| %.3g, more than %g times its scale %.3g (its largest part %.3g)", prm.Name, diff, tol, scale, parts[prm.Name])
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
