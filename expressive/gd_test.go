package expressive

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
)

// randomInput returns an L x n input with independent sd * N(0, 1) entries.
func randomInput(L, n int, sd float64, seed uint64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 4))
	x := mat.NewDense(L, n, nil)
	for i := range L {
		for j := range n {
			x.Set(i, j, sd*rng.NormFloat64())
		}
	}
	return x
}

// The gradient Gorgonia derives for the loss graph with respect to X matches central
// finite differences, at input scales where the leak arguments are mostly saturated
// (sd 2) and mostly near 0 (sd 0.3), for targets with one to four entries per row.
func TestGDGradientFiniteDifferences(t *testing.T) {
	const L, d, eps = 7, 3, 0.1
	set, err := NewGDSet(d, 5, DefaultGDOptions(eps))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 2, 4} {
		for _, sd := range []float64{2, 0.3} {
			tg, err := RandomTarget(L, k, 20, rand.New(rand.NewPCG(2, uint64(k))))
			if err != nil {
				t.Fatal(err)
			}
			x := denseTensor(randomInput(L, 2*d, sd, uint64(k)))
			build := func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				lg, err := newLossGraph(in[0], set.Module.WQ, set.Module.WK, maxRowSize(tg), eps)
				if err != nil {
					return nil, err
				}
				return lg.Loss, lg.SetTarget(tg)
			}
			res, err := gradcheck.Check(build, []gradcheck.Input{{Name: "X", Value: x}}, 1, 1e-6)
			if err != nil {
				t.Fatal(err)
			}
			if res.Max > 1e-7 {
				t.Errorf("k = %d, sd = %v: relative error %.3g against finite differences", k, sd, res.Max)
			}
			t.Logf("k = %d, sd = %v: relative error %.3g", k, sd, res.Max)
		}
	}
}

// The graph's logits, loss and gradient equal the plain-Go reference (refLossX) for the
// same X, for rows with one to four entries (padded slots included), at input scales
// where the leak terms are saturated or not, and on a compiled machine reused for a
// second target of the same shape ((40, 4) twice).
func TestGraphLossMatchesReference(t *testing.T) {
	const d, eps = 4, 0.1
	set, err := NewGDSet(d, 3, DefaultGDOptions(eps))
	if err != nil {
		t.Fatal(err)
	}
	targets := []*Target{handTarget()}
	for _, c := range []struct{ L, k int }{{7, 1}, {40, 2}, {40, 4}, {40, 4}} {
		tg, err := RandomTarget(c.L, c.k, 10, rand.New(rand.NewPCG(uint64(len(targets)), 9)))
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, tg)
	}
	for n, tg := range targets {
		for _, sd := range []float64{1.5, 0.3} {
			x := randomInput(tg.L, 2*d, sd, uint64(n))
			gm, err := set.machine(tg)
			if err != nil {
				t.Fatal(err)
			}
			if err := gm.lg.SetTarget(tg); err != nil {
				t.Fatal(err)
			}
			copy(gm.X(), x.RawMatrix().Data)
			grad := make([]float64, tg.L*2*d)
			loss, z, err := gm.Run(grad)
			if err != nil {
				t.Fatal(err)
			}
			wantZ, _ := set.Module.Logits(x)
			wantLoss, wantGrad := refLossX(set.Module, x, tg, eps)
			name := fmt.Sprintf("target %d (L = %d), sd %v", n, tg.L, sd)
			if !mat.EqualApprox(z, wantZ, 1e-12) {
				t.Errorf("%s: graph logits differ from Module.Logits", name)
			}
			if math.Abs(loss-wantLoss) > 1e-12*math.Abs(wantLoss) {
				t.Errorf("%s: graph loss %.17g, reference %.17g", name, loss, wantLoss)
			}
			gotGrad := mat.NewDense(tg.L, 2*d, grad)
			var diff mat.Dense
			diff.Sub(gotGrad, wantGrad)
			if e := mat.Norm(&diff, 2) / mat.Norm(wantGrad, 2); e > 1e-10 {
				t.Errorf("%s: graph gradient differs from the hand-derived one by %.3g (relative)", name, e)
			}
		}
	}
	if len(set.machines) != 4 {
		t.Errorf("%d compiled machines, want 4: one per (L, largest row) = (3, 3), (7, 1), (40, 2), (40, 4)", len(set.machines))
	}
}

// The reference loss on hand-made logits: a row meeting every condition with room has a
// tiny loss, and a wrong ratio costs ((error)/a)^2.
func TestLossHand(t *testing.T) {
	const eps = 0.1
	a := math.Log1p(eps)
	tg := &Target{L: 2, Rows: [][]Entry{{{Col: 0, Val: 1}}, {{Col: 0, Val: 1}, {Col: 1, Val: 2}}}}
	// Row 0: off-support entry 40 nats below; row 1: ratio off by 0.3 nats, no off-support.
	z := mat.NewDense(2, 2, []float64{0, -40, 0, math.Log(2) + 0.3})
	loss, _ := refLoss(z, tg, eps)
	want := (math.Log1p(math.Exp((-40+math.Log(10))/a)) + 2*(0.15/a)*(0.15/a)) / 2
	if math.Abs(loss-want) > 1e-12 {
		t.Fatalf("loss %v, want %v", loss, want)
	}
}

// gd lowers its loss and reaches success on a small case, at a width where the
// constructive method fails; the same seed gives the same fit, also after the compiled
// loss was used for other targets.
func TestGDReducesLossAndSucceeds(t *testing.T) {
	const L, k, d, eps = 16, 2, 8, 0.1
	set, err := NewGDSet(d, 1, DefaultGDOptions(eps))
	if err != nil {
		t.Fatal(err)
	}
	var first GDResult
	for n := range 3 {
		tg, err := RandomTarget(L, k, 10, rand.New(rand.NewPCG(uint64(n), 1)))
		if err != nil {
			t.Fatal(err)
		}
		res, err := set.Fit(tg, rand.New(rand.NewPCG(uint64(n), 2)))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Success || !(res.FinalLoss < res.InitialLoss) || res.Iterations == 0 {
			t.Fatalf("target %d: success %v after %d steps, loss %v -> %v", n, res.Success, res.Iterations, res.InitialLoss, res.FinalLoss)
		}
		z, err := set.Module.Logits(res.X)
		if err != nil {
			t.Fatal(err)
		}
		p, err := MeasureLogits(z, tg)
		if err != nil || !p.Success(eps) {
			t.Fatalf("target %d: the returned X does not realise the target (%v)", n, err)
		}
		again, _ := set.Fit(tg, rand.New(rand.NewPCG(uint64(n), 2)))
		if !mat.Equal(again.X, res.X) || again.Iterations != res.Iterations {
			t.Fatalf("target %d: the same seed gave a different fit", n)
		}
		if n == 0 {
			first = res
		}
		t.Logf("target %d: %d steps, loss %.3g -> %.3g, ratio err %.3g, leak %.3g", n, res.Iterations, res.InitialLoss, res.FinalLoss, p.RatioErr(), p.Leak())
	}
	tg, _ := RandomTarget(L, k, 10, rand.New(rand.NewPCG(0, 1)))
	again, err := set.Fit(tg, rand.New(rand.NewPCG(0, 2)))
	if err != nil || !mat.Equal(again.X, first.X) || again.Iterations != first.Iterations {
		t.Fatalf("target 0 fitted after targets 1 and 2 differs from its first fit (%v)", err)
	}
	if ok := jlRate(t, L, k, d, 10, eps); ok != 0 {
		t.Errorf("jl at d = %d succeeded %d/10 times: the case does not show gd's advantage", d, ok)
	}
}

func TestGDErrors(t *testing.T) {
	if _, err := NewGDSet(0, 1, DefaultGDOptions(0.1)); err == nil {
		t.Error("d = 0 gave no error")
	}
	for _, o := range []GDOptions{{Eps: 0, MaxIter: 1, LearningRate: 1}, {Eps: 0.1, MaxIter: 0, LearningRate: 1}, {Eps: 0.1, MaxIter: 1, LearningRate: 0}} {
		if _, err := NewGDSet(2, 1, o); err == nil {
			t.Errorf("options %+v gave no error", o)
		}
	}
	set, _ := NewGDSet(2, 1, DefaultGDOptions(0.1))
	if _, err := set.Fit(handTarget(), nil); err == nil {
		t.Error("nil generator gave no error")
	}
	if _, err := set.Fit(&Target{L: 2, Rows: [][]Entry{{{Col: 0, Val: 1}}, {}}}, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("invalid target gave no error")
	}
	for _, K := range []int{0, 4} {
		if _, err := newGDMachine(set.Module, 3, K, 0.1); err == nil {
			t.Errorf("K = %d entries per row for L = 3 gave no error", K)
		}
	}
	g := G.NewGraph()
	wide := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 5), G.WithName("X"))
	if _, err := newLossGraph(wide, set.Module.WQ, set.Module.WK, 1, 0.1); err == nil {
		t.Error("input of the wrong width gave no error")
	}
	gm, err := newGDMachine(set.Module, 3, 2, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if err := gm.lg.SetTarget(handTarget()); err == nil {
		t.Error("a row with 3 entries in a graph for 2 gave no error")
	}
	if err := gm.lg.SetTarget(&Target{L: 2, Rows: [][]Entry{{{Col: 0, Val: 1}}, {{Col: 1, Val: 1}}}}); err == nil {
		t.Error("a target of another length gave no error")
	}
}
