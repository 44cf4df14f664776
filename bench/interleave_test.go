package bench

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"lipformer/model"
	"lipformer/spec"
)

// TestPlanRunInterleaved: an interleaved plan measures the toy configuration's
// architectures in every mode, in the plan's order, each as its own job (its loss, its
// FLOPs) and all but the first paired with the first, the paired ratios' quartiles in
// order; and refuses PyTorch.
func TestPlanRunInterleaved(t *testing.T) {
	ps, err := model.FindPresets("tiny")
	if err != nil {
		t.Fatal(err)
	}
	archs := []spec.Arch{spec.DP, spec.L2, spec.InvertibleL2}
	p := Plan{Presets: ps, Archs: archs, Modes: []string{ModeTrain, ModeEval}, Interleave: true,
		Set: Settings{Steps: 5, Warmup: 1, Seed: 1, Dtype: spec.Float32, SampleBatch: 1, SampleWindow: string(model.Shift)}}
	var got []Measurement
	if _, _, err := p.Run(context.Background(), func(r Measurement) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 {
		t.Fatalf("%d measurements, want 6", len(got))
	}
	for i, r := range got {
		arch, mode := archs[i%3].String(), p.Modes[i/3]
		alone, err := NewJob(ps[0], archs[i%3], p.Set).Measure(mode)
		if err != nil {
			t.Fatal(err)
		}
		if r.Arch != arch || r.Mode != mode || !r.Interleaved || r.GFLOP != alone.GFLOP || r.Params != alone.Params {
			t.Errorf("measurement %d: %s %s, interleaved %v, %v GFLOP, %d parameters; want %s %s, true, %v, %d",
				i, r.Arch, r.Mode, r.Interleaved, r.GFLOP, r.Params, arch, mode, alone.GFLOP, alone.Params)
		}
		if mode == ModeEval && r.Loss != alone.Loss {
			t.Errorf("%s eval loss %v interleaved, %v alone: want the job's own", arch, r.Loss, alone.Loss)
		}
		if i%3 == 0 {
			if r.PairedWith != "" || r.PairedMedian != 0 {
				t.Errorf("%s %s: paired with %q (%v), want no pairing for the first", arch, mode, r.PairedWith, r.PairedMedian)
			}
		} else if r.PairedWith != "dp" || !(0 < r.PairedQ1 && r.PairedQ1 <= r.PairedMedian && r.PairedMedian <= r.PairedQ3) {
			t.Errorf("%s %s: paired with %q, quartiles %v %v %v; want dp and 0 < q1 <= median <= q3",
				arch, mode, r.PairedWith, r.PairedQ1, r.PairedMedian, r.PairedQ3)
		}
		if r.SpeedupVsTrain > 0 != (mode == ModeEval) {
			t.Errorf("%s %s: speedup over training %v", arch, mode, r.SpeedupVsTrain)
		}
	}
	p.Torch = &Torch{}
	if _, _, err := p.Run(context.Background(), func(Measurement) error { return nil }); err == nil || !strings.Contains(err.Error(), "interleaved") {
		t.Errorf("interleaved with PyTorch: %v, want an error", err)
	}
}

// TestPairedQuartiles: the ratios pair the runs of the same round, and their quartiles are
// the medians of the halves.
func TestPairedQuartiles(t *testing.T) {
	a := []time.Duration{2, 9, 3, 8, 30}
	b := []time.Duration{1, 3, 3, 2, 10}
	r := pairedRatios(a, b)
	for i, want := range []float64{2, 3, 1, 4, 3} {
		if r[i] != want {
			t.Errorf("ratio %d: %v, want %v", i, r[i], want)
		}
	}
	for _, c := range []struct {
		xs        []float64
		q1, m, q3 float64
	}{
		{r, 1.5, 3, 3.5},
		{[]float64{8, 1, 7, 2, 6, 3, 5, 4}, 2.5, 4.5, 6.5},
		{[]float64{0.9}, 0.9, 0.9, 0.9},
	} {
		if q1, m, q3 := quartiles(c.xs); q1 != c.q1 || m != c.m || q3 != c.q3 {
			t.Errorf("quartiles(%v) = %v %v %v, want %v %v %v", c.xs, q1, m, q3, c.q1, c.m, c.q3)
		}
	}
}

// TestTimeInterleaved: round i starts with run i mod n and calls each once, a call's time
// is counted to its own run, so a run three times as slow as the first is paired at about
// 3, and a failing call names its run.
func TestTimeInterleaved(t *testing.T) {
	var order []int
	sleeper := func(k int, d time.Duration) func(int) error {
		return func(i int) error {
			if i >= 2 { // past the warm-up
				order = append(order, k)
			}
			time.Sleep(d)
			return nil
		}
	}
	runs := []func(int) error{sleeper(0, 4*time.Millisecond), sleeper(1, 12*time.Millisecond), sleeper(2, 8*time.Millisecond)}
	tms, _, err := timeInterleaved(runs, 2, 7)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		for n, k := range order[3*i : 3*i+3] {
			if k != (i+n)%3 {
				t.Fatalf("round %d runs %v, want it to start with %d and follow in order", i, order[3*i:3*i+3], i%3)
			}
		}
	}
	for k, want := range []float64{3, 2} {
		if _, m, _ := quartiles(pairedRatios(tms[k+1].durs, tms[0].durs)); m < 0.7*want || m > 1.3*want {
			t.Errorf("run %d over run 0: median %.2f, want about %v", k+1, m, want)
		}
	}
	runs[2] = func(int) error { return errors.New("boom") }
	if _, k, err := timeInterleaved(runs, 1, 1); err == nil || k != 2 {
		t.Errorf("a failing third run: index %d, error %v; want 2 and its error", k, err)
	}
}
