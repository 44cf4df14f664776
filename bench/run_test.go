package bench

import (
	"context"
	"math"
	"strings"
	"testing"

	"lipformer/model"
	"lipformer/spec"
)

// TestPlanRun measures every mode of the toy configuration once: the measurements come in
// the plan's order, eval and sample with their speedup over the training step, and with
// the FLOPs of model.CountFLOPs and CountFillFLOPs.
func TestPlanRun(t *testing.T) {
	ps, err := model.FindPresets("tiny")
	if err != nil {
		t.Fatal(err)
	}
	p := Plan{Presets: ps, Archs: []spec.Arch{spec.L2}, Modes: Modes(),
		Set: Settings{Steps: 1, Seed: 1, Dtype: spec.Float32, SampleBatch: 1, SampleWindow: string(model.Shift)}}
	var got []Measurement
	comps, checks, err := p.Run(context.Background(), func(r Measurement) error { got = append(got, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(comps) != 0 || len(checks) != 0 || len(got) != 3 {
		t.Fatalf("%d measurements, %d comparisons, %d checks: want 3, 0, 0", len(got), len(comps), len(checks))
	}
	cfg := ps[0].Config(spec.L2, spec.Float32)
	fl, err := model.CountFLOPs(cfg, ps[0].Batch)
	if err != nil {
		t.Fatal(err)
	}
	fill, err := model.CountFillFLOPs(cfg, cfg.Context/2+1)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{fl.Train, fl.Forward, SampleCycles * fill} {
		r := got[i]
		if r.Mode != Modes()[i] || math.Abs(r.GFLOP*1e9-want) > 1e-6*want || (i > 0) != (r.SpeedupVsTrain > 0) {
			t.Errorf("measurement %d: mode %s, %v GFLOP, speedup %v; want %s, %v", i, r.Mode, r.GFLOP, r.SpeedupVsTrain, Modes()[i], want/1e9)
		}
	}
}

func TestCheckLosses(t *testing.T) {
	ok := LossCheck{Config: "tiny", Arch: "dp", OK: true}
	if err := CheckLosses([]LossCheck{ok}); err != nil {
		t.Errorf("a passed check: %v", err)
	}
	bad := LossCheck{Config: "tiny", Arch: "l2", GoLoss: 1, TorchLoss: 1.5, AbsDiff: 0.5, Tol: 1e-4}
	if err := CheckLosses([]LossCheck{ok, bad}); err == nil || !strings.Contains(err.Error(), "tiny l2: Go 1.00000000") || strings.Contains(err.Error(), "tiny dp") {
		t.Errorf("a failed check: %v", err)
	}
}

// TestRecipeJobs: with Settings.Recipe, contractive-l2 and invertible-l2 are measured as
// their certified recipes train them, named arch+recipe, with the matrix-product FLOPs of
// that model; dp is unchanged. The tiny preset's invertible recipe has RecipeMLPBlocks
// sub-blocks sharing its MLP width.
func TestRecipeJobs(t *testing.T) {
	ps, err := model.FindPresets("tiny")
	if err != nil {
		t.Fatal(err)
	}
	set := Settings{Steps: 1, Seed: 1, Dtype: spec.Float32, SampleBatch: 1, SampleWindow: string(model.Shift), Recipe: true}
	p := Plan{Presets: ps, Archs: []spec.Arch{spec.DP, spec.ContractiveL2, spec.InvertibleL2}, Modes: []string{ModeTrain}, Set: set}
	var got []Measurement
	if _, _, err := p.Run(context.Background(), func(r Measurement) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []string{"dp", "contractive-l2+recipe", "invertible-l2+recipe"}
	if len(got) != len(want) {
		t.Fatalf("%d measurements, want %d", len(got), len(want))
	}
	for i, arch := range p.Archs {
		j := NewJob(ps[0], arch, set)
		fl, err := model.CountFLOPs(j.Cfg, ps[0].Batch)
		if err != nil {
			t.Fatal(err)
		}
		if got[i].Arch != want[i] || math.Abs(got[i].GFLOP*1e9-fl.Train) > 1e-6*fl.Train {
			t.Errorf("measurement %d: %s, %v GFLOP; want %s, %v", i, got[i].Arch, got[i].GFLOP, want[i], fl.Train/1e9)
		}
		if arch == spec.DP && j.Cfg != ps[0].Config(arch, spec.Float32) {
			t.Errorf("dp's configuration changed by the recipe: %+v", j.Cfg)
		}
	}
	inv := NewJob(ps[0], spec.InvertibleL2, set).Cfg
	if inv.L2Bound.String() != "token2" || !inv.L2Temp || !inv.L2PosBias || inv.MLPGain != spec.RecipeMLPGain ||
		inv.MLPSubBlocks() != spec.RecipeMLPBlocks || inv.HiddenWidth()*spec.RecipeMLPBlocks != 4*inv.Width {
		t.Errorf("invertible-l2 recipe job %+v", inv)
	}
}

// TestActivationJobs: -activation maxmin reaches the invertible architectures' models and
// names, and leaves dp as it was.
func TestActivationJobs(t *testing.T) {
	ps, err := model.FindPresets("tiny")
	if err != nil {
		t.Fatal(err)
	}
	set := Settings{Steps: 1, Seed: 1, Dtype: spec.Float32, Recipe: true, Activation: "maxmin"}
	inv, dp := NewJob(ps[0], spec.InvertibleL2, set), NewJob(ps[0], spec.DP, set)
	if inv.Cfg.Activation != "maxmin" || inv.ArchName() != "invertible-l2+recipe+maxmin" {
		t.Errorf("invertible-l2: activation %q, name %q", inv.Cfg.Activation, inv.ArchName())
	}
	if dp.Cfg != ps[0].Config(spec.DP, spec.Float32) || dp.ArchName() != "dp" {
		t.Errorf("dp changed by -activation: %+v, %q", dp.Cfg, dp.ArchName())
	}
	if err := inv.Cfg.Validate(); err != nil {
		t.Error(err)
	}
}

// TestMLPBlocksJobs: -mlp-blocks sets the invertible architectures' MLP sub-blocks, each of
// the preset's MLP width over their number, under the recipe (in place of its eight) and
// without it, names them, and leaves dp as it was.
func TestMLPBlocksJobs(t *testing.T) {
	ps, err := model.FindPresets("tiny")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		arch   spec.Arch
		recipe bool
		blocks int
		name   string
	}{
		{spec.InvertibleL2, true, 1, "invertible-l2+recipe+mlp1"},
		{spec.InvertibleL2, true, 2, "invertible-l2+recipe+mlp2"},
		{spec.InvertibleDP, false, 4, "invertible-dp+mlp4"},
	} {
		j := NewJob(ps[0], c.arch, Settings{Steps: 1, Seed: 1, Dtype: spec.Float32, Recipe: c.recipe, MLPBlocks: c.blocks})
		if j.Cfg.MLPSubBlocks() != c.blocks || j.Cfg.HiddenWidth()*c.blocks != 4*j.Cfg.Width || j.ArchName() != c.name {
			t.Errorf("%s: %d sub-blocks of width %d, named %q", c.name, j.Cfg.MLPSubBlocks(), j.Cfg.HiddenWidth(), j.ArchName())
		}
		if err := j.Cfg.Validate(); err != nil {
			t.Error(err)
		}
	}
	dp := NewJob(ps[0], spec.DP, Settings{Steps: 1, Seed: 1, Dtype: spec.Float32, Recipe: true, MLPBlocks: 4})
	if dp.Cfg != ps[0].Config(spec.DP, spec.Float32) || dp.ArchName() != "dp" {
		t.Errorf("dp changed by -mlp-blocks: %+v, %q", dp.Cfg, dp.ArchName())
	}
}
