package train

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"lipformer/model"
	"lipformer/spec"
)

// powerRun trains a small invertible-l2 model (dropout on) for the given steps with
// PowerIters n in out, or resumes the run in out with the options its checkpoint stores
// (RunDir.Resume, as cmd/train -resume) when n < 0, and returns its training rows.
func powerRun(t *testing.T, out string, steps, n int) []TrainRow {
	t.Helper()
	c := smallCorpus(t)
	var r *Run
	if n < 0 {
		d, err := OpenRun(out)
		if err != nil {
			t.Fatal(err)
		}
		if r, _, err = d.Resume(); err != nil {
			t.Fatal(err)
		}
		r.Opt.Steps = steps
	} else {
		o := smallOptions(steps)
		o.Schedule, o.PowerIters, o.FinalPowerIters = "constant", n, 0 // continued runs continue exactly
		cfg := smallModel(t, c, spec.InvertibleL2, spec.Float64, 3).Cfg
		cfg.Dropout = 0.1
		m, err := model.New(cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		r = &Run{Model: m, Opt: o, Out: out}
	}
	r.Corpus, r.Log = c, quiet()
	if _, err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	m, err := ReadMetrics(filepath.Join(out, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	return m.Train
}

// sameRows reports the first step at which the losses or gradient norms of a and b differ
// in a bit, or -1.
func sameRows(a, b []TrainRow) int {
	for i := range min(len(a), len(b)) {
		if a[i].Loss != b[i].Loss || a[i].GradNorm != b[i].GradNorm {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// TestStoredRunWithoutPowerItersResumesWithOne: a run whose stored options lack
// power_iters (0, as runs stored before the setting) takes one power iteration per step
// and, resumed from its checkpoint's options, continues exactly as an uninterrupted run of
// one iteration per step; more iterations per step train other weights.
func TestStoredRunWithoutPowerItersResumesWithOne(t *testing.T) {
	one := powerRun(t, t.TempDir(), 10, 1)
	old := t.TempDir()
	powerRun(t, old, 5, 0)
	_, ck, err := model.Load(filepath.Join(old, LatestFile))
	if err != nil {
		t.Fatal(err)
	}
	if stored := ck.Meta[MetaTrain]; strings.Contains(stored, `"power_iters"`) {
		t.Fatalf("options of PowerIters 0 stored as %s, want no power_iters (the options of a run stored before the setting)", stored)
	}
	resumed := powerRun(t, old, 10, -1)
	if i := sameRows(one, resumed); i >= 0 {
		t.Errorf("step %d: a resumed run stored without power_iters trains other weights than one of 1 power iteration per step", i)
	}
	if i := sameRows(one, powerRun(t, t.TempDir(), 10, 8)); i < 0 {
		t.Error("8 power iterations per step train the same weights as 1")
	}
}

// TestPowerItersOutOfRange: a negative count is refused by the options and the stepper.
func TestPowerItersOutOfRange(t *testing.T) {
	o := DefaultOptions()
	o.PowerIters = -1
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "power-iters -1") {
		t.Errorf("options of -1 power iterations: error %v, want one naming power-iters -1", err)
	}
	m := stepperModel(t, spec.InvertibleL2, spec.Float64)
	if _, err := NewStepper[float64](m, 1, StepConfig{Adam: DefaultAdamConfig(), PowerIters: -1}); err == nil || !strings.Contains(err.Error(), "power iterations") {
		t.Errorf("stepper of -1 power iterations: error %v", err)
	}
}

// TestFinalPowerItersCertifyTheBranchesAtC: a small invertible-l2 model trained with one
// power iteration per step at a high learning rate has estimates that trail its weights,
// so that some branch certifies above c; the final refinement (Options.FinalPowerIters)
// brings every branch of the summary's certificate, which is that of the last checkpoint,
// within 0.1% of c.
func TestFinalPowerItersCertifyTheBranchesAtC(t *testing.T) {
	c := smallCorpus(t)
	worst := func(final int) float64 {
		o := smallOptions(20)
		o.LR, o.MinLR, o.PowerIters, o.FinalPowerIters = 3e-2, 3e-2, 1, final
		cfg := smallModel(t, c, spec.InvertibleL2, spec.Float64, 3).Cfg.WithCertifiedRecipe()
		m, err := model.New(cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := (&Run{Model: m, Corpus: c, Opt: o, Out: t.TempDir(), Log: quiet(), Certify: true}).Train(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var w float64
		for _, f := range sum.Certificate.Factors {
			if strings.Contains(f.Name, ".attn") || strings.Contains(f.Name, ".mlp") {
				w = max(w, (float64(f.Tok2)-1)/cfg.LipC)
			}
		}
		return w
	}
	if w := worst(0); !(w > 1.001) {
		t.Fatalf("without the refinement the largest branch is %.5f c: the test cannot see a missing refinement", w)
	}
	if w := worst(500); w > 1.001 {
		t.Errorf("after 500 final power iterations the largest branch is %.5f c, want at most 1.001 c", w)
	}
}
