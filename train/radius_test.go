package train

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"lipformer/model"
	"lipformer/spec"
)

// TestCertifiedRadiiAreTheDecodersAtEveryStride: at every stride, the radius of the k-th
// scored byte is that of the logits the decoder (a separate plain-Go implementation) gives
// target k+1 from the bytes the stride's windows give it, and its top-1 is right exactly
// as often as EvaluateScore's hits count.
func TestCertifiedRadiiAreTheDecodersAtEveryStride(t *testing.T) {
	cfg := model.Config{Arch: spec.InvertibleL2, Layers: 1, Heads: 2, Width: 8, Context: 5, Vocab: 7, Norm: spec.BallPre, LipC: 0.5, Dtype: spec.Float64,
		Std: 0.3, EmbedStd: 1, LipK: 10}.WithCertifiedRecipe()
	m, err := model.New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.RadiusBound()
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.NewProgram(model.Sample, 3)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := m.NewProgram(model.Eval, 3)
	if err != nil {
		t.Fatal(err)
	}
	d, err := m.NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 0))
	tokens := make([]int, 23)
	for i := range tokens {
		tokens[i] = rng.IntN(cfg.Vocab)
	}
	T := cfg.Context
	for S := 1; S <= T; S++ {
		calls := 0
		r, err := CertifiedRadii(p, tokens, S, b, func(done, total int) { calls++ })
		if err != nil {
			t.Fatal(err)
		}
		if len(r.PerClass) != len(tokens)-1 || calls == 0 {
			t.Fatalf("stride %d: %d radii for %d scored bytes, %d progress calls", S, len(r.PerClass), len(tokens)-1, calls)
		}
		right := 0
		for target := 1; target < len(tokens); target++ {
			start := 0
			if target > T {
				start = (target - T + S - 1) / S * S
			}
			logits, err := d.Prefill(tokens[start:target])
			if err != nil {
				t.Fatal(err)
			}
			top, perClass, whole := b.Radius(logits)
			k := target - 1
			if math.Abs(perClass-r.PerClass[k]) > 1e-9*perClass || math.Abs(whole-r.Whole[k]) > 1e-9*whole || (top == tokens[target]) != r.Correct[k] {
				t.Fatalf("stride %d, target %d: radii %v, %v, right %v; the decoder's %v, %v, %v", S, target, r.PerClass[k], r.Whole[k], r.Correct[k], perClass, whole, top == tokens[target])
			}
			if r.Correct[k] {
				right++
			}
		}
		s, err := EvaluateScore(context.Background(), ev, tokens, S, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.Hits != right {
			t.Errorf("stride %d: %d right among the radii, EvaluateScore counts %d hits", S, right, s.Hits)
		}
	}
}

// TestRadiusReportCounts: the fractions, medians and curve of a hand-made set of radii.
func TestRadiusReportCounts(t *testing.T) {
	r := &Radii{Bound: &model.RadiusBound{Whole: 3, Body: 2, NearestBytes: 0.5, FarthestBytes: 2.5}, PerClass: []float64{0, 1, 2, 3, 4}, Whole: []float64{0, 0.5, 1, 1.5, 2},
		Correct: []bool{true, false, true, false, true}}
	rep := r.Report([]float64{0, 1.5, 4}, 3)
	want := []RadiusPoint{{0, 0.8, 0.8, 0.4}, {1.5, 0.6, 0.2, 0.4}, {4, 0, 0, 0}}
	for i, w := range want {
		if rep.Points[i] != w {
			t.Errorf("at R = %v: %+v, want %+v", w.R, rep.Points[i], w)
		}
	}
	if rep.MedianRadius != 2 || rep.MedianRadiusWhole != 1 || rep.Scored != 5 || rep.Certificate != 3 || rep.Body != 2 {
		t.Errorf("report %+v, want medians 2 and 1 over 5 bytes, K = 3, L_h = 2", rep)
	}
	if w := (RadiusPoint{2.5, 0.4, 0, 0.2}); rep.AnySubstitution != w || rep.NearestBytes != 0.5 || rep.FarthestBytes != 2.5 {
		t.Errorf("any substitution %+v between bytes %v to %v apart, want %+v between 0.5 and 2.5", rep.AnySubstitution, rep.NearestBytes, rep.FarthestBytes, w)
	}
	// positive radii 1, 2, 3, 4: the 1st percentile 1, the 99th 3 (rank floor(0.99 * 3) = 2)
	if len(rep.Curve) != 3 || math.Abs(rep.Curve[0].R-1) > 1e-12 || math.Abs(rep.Curve[1].R-math.Sqrt(3)) > 1e-12 || math.Abs(rep.Curve[2].R-3) > 1e-12 {
		t.Errorf("curve %+v, want R = 1, sqrt(3), 3", rep.Curve)
	}
	if r := (&Radii{Bound: r.Bound, PerClass: []float64{0}, Whole: []float64{0}, Correct: []bool{true}}).Report(nil, 5); r.Curve != nil {
		t.Errorf("curve %+v without a positive radius, want none", r.Curve)
	}
}
