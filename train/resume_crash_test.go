package train

import (
	"context"
	"lipformer/spec"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// hookHandler is a slog handler that calls on with every record and writes nothing.
type hookHandler struct{ on func(slog.Record) }

func (h hookHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h hookHandler) Handle(_ context.Context, r slog.Record) error {
	h.on(r)
	return nil
}

func (h hookHandler) WithAttrs([]slog.Attr) slog.Handler { return h }

func (h hookHandler) WithGroup(string) slog.Handler { return h }

// recordStep is the "step" attribute of a log record, or -1.
func recordStep(r slog.Record) int {
	step := -1
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "step" {
			step = int(a.Value.Int64())
			return false
		}
		return true
	})
	return step
}

// copyFiles copies the named files of dir src that exist into dir dst.
func copyFiles(t *testing.T, src, dst string, names ...string) {
	t.Helper()
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(src, name))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestResumeAfterACrashPastTheCheckpoint: a run that crashed after its metrics log ran past
// its last checkpoint, and is resumed from it, ends with the log of the same run trained
// without the crash: every training step, validation and bounds row once, with the same
// losses, learning rates, gradient norms and bounds.
//
// The crash is the directory of an uninterrupted run (6 steps, a validation and a
// checkpoint every 2, bounds after every step) copied at the log record of the validation
// after step 4, which the run writes after that validation's metrics row and before its
// checkpoint: the checkpoint is of step 2 and the log holds the training rows of steps 2
// and 3, the bounds after them and the validation at step 4, all of which the resumed run
// writes again.
func TestResumeAfterACrashPastTheCheckpoint(t *testing.T) {
	c := smallCorpus(t)
	whole, crashed := t.TempDir(), t.TempDir()
	o := smallOptions(6)
	o.EvalEvery, o.LogLipschitz = 2, 1
	copied := false
	log := slog.New(hookHandler{func(r slog.Record) {
		if r.Message == "validation" && recordStep(r) == 4 {
			copyFiles(t, whole, crashed, LatestFile, BestFile, MetricsFile, LockFile)
			copied = true
		}
	}})
	if _, err := (&Run{Model: smallModel(t, c, spec.L2, spec.Float64, 5), Corpus: c, Opt: o, Out: whole, Log: log}).Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !copied {
		t.Fatal("the run logged no validation at step 4")
	}
	want, err := ReadMetrics(filepath.Join(whole, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}

	d, err := OpenRun(crashed)
	if err != nil {
		t.Fatal(err)
	}
	if act, err := d.Action(); err != nil || act != ActResume {
		t.Fatalf("the crashed run's action is %q (%v), want %q", act, err, ActResume)
	}
	before, err := d.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	r, step, err := d.Resume()
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Train) == 0 || len(before.Eval) == 0 {
		t.Fatalf("crash: %d training and %d validation rows in the log", len(before.Train), len(before.Eval))
	}
	if last, eval := before.Train[len(before.Train)-1].Step, before.Eval[len(before.Eval)-1].Step; step != 2 || last != 3 || eval != 4 {
		t.Fatalf("crash: checkpoint at step %d, log through the training row of step %d and the validation at %d; want 2, 3 and 4", step, last, eval)
	}
	r.Corpus, r.Log = c, quiet()
	if _, err := r.Train(context.Background()); err != nil {
		t.Fatalf("resume after the crash: %v", err)
	}
	got, err := d.Metrics()
	if err != nil {
		t.Fatal(err)
	}

	if len(got.Train) != len(want.Train) {
		t.Errorf("%d training rows after the resume, %d in the run without the crash", len(got.Train), len(want.Train))
	}
	for i, row := range got.Train {
		if row.Step != i {
			t.Fatalf("training row %d is of step %d; want every step of 0..5 once, in order", i, row.Step)
		}
		if i < len(want.Train) {
			w := want.Train[i]
			if !agree(row.Loss, w.Loss) || !agree(row.LR, w.LR) || !agree(row.GradNorm, w.GradNorm) {
				t.Errorf("step %d: loss %.15g, lr %g, gradient norm %.15g; without the crash %.15g, %g, %.15g",
					i, row.Loss, row.LR, row.GradNorm, w.Loss, w.LR, w.GradNorm)
			}
		}
	}
	evalSteps := func(m Metrics) (s []int) {
		for _, row := range m.Eval {
			s = append(s, row.Step)
		}
		return s
	}
	if g, w := evalSteps(got), evalSteps(want); !reflect.DeepEqual(g, w) || !reflect.DeepEqual(w, []int{0, 2, 4, 6}) {
		t.Errorf("validations at steps %v after the resume, %v without the crash; want 0 (the initial weights, not again on resume), 2, 4, 6 once each", g, w)
	} else {
		for i, row := range got.Eval {
			if !agree(row.ValLoss, want.Eval[i].ValLoss) {
				t.Errorf("validation at step %d: %.15g, without the crash %.15g", row.Step, row.ValLoss, want.Eval[i].ValLoss)
			}
		}
	}
	if len(got.Lipschitz) != 6 || len(want.Lipschitz) != 6 {
		t.Fatalf("%d bounds rows after the resume, %d without the crash; want 6", len(got.Lipschitz), len(want.Lipschitz))
	}
	for i, row := range got.Lipschitz {
		if row.Step != i+1 || !reflect.DeepEqual(row, want.Lipschitz[i]) {
			t.Errorf("bounds row %d: %+v after the resume, %+v without the crash", i, row, want.Lipschitz[i])
		}
	}
}

// agree reports whether a and b agree to 1e-12 relative.
func agree(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }
