package expressive

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The hand-derived gradient of the loss with respect to X matches central finite
// differences in every coordinate.
func TestGDGradientFiniteDifferences(t *testing.T) {
	const L, d, eps = 7, 3, 0.1
	tg, err := RandomTarget(L, 2, 20, rand.New(rand.NewPCG(2, 3)))
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewGDSet(d, 5, DefaultGDOptions(eps))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	x := mat.NewDense(L, 2*d, nil)
	for i := range L {
		for j := range 2 * d {
			x.Set(i, j, 2*rng.NormFloat64())
		}
	}
	_, grad, _, err := set.LossGrad(x, tg)
	if err != nil {
		t.Fatal(err)
	}
	const h = 1e-5
	var maxErr, maxGrad float64
	for i := range L {
		for j := range 2 * d {
			orig := x.At(i, j)
			x.Set(i, j, orig+h)
			up, _, _, _ := set.LossGrad(x, tg)
			x.Set(i, j, orig-h)
			down, _, _, _ := set.LossGrad(x, tg)
			x.Set(i, j, orig)
			fd := (up - down) / (2 * h)
			maxErr = math.Max(maxErr, math.Abs(fd-grad.At(i, j)))
			maxGrad = math.Max(maxGrad, math.Abs(fd))
		}
	}
	if maxGrad == 0 || maxErr > 1e-6*maxGrad {
		t.Fatalf("gradient max error %v against finite differences (max |gradient| %v)", maxErr, maxGrad)
	}
}

// The loss on hand-made logits: a row meeting every condition with room has a tiny loss,
// and a wrong ratio costs ((error)/a)^2.
func TestLossHand(t *testing.T) {
	const eps = 0.1
	a := math.Log1p(eps)
	tg := &Target{L: 2, Rows: [][]Entry{{{Col: 0, Val: 1}}, {{Col: 0, Val: 1}, {Col: 1, Val: 2}}}}
	// Row 0: off-support entry 40 nats below; row 1: ratio off by 0.3 nats, no off-support.
	z := mat.NewDense(2, 2, []float64{0, -40, 0, math.Log(2) + 0.3})
	loss, _ := Loss(z, tg, eps)
	want := (math.Log1p(math.Exp((-40+math.Log(10))/a)) + 2*(0.15/a)*(0.15/a)) / 2
	if math.Abs(loss-want) > 1e-12 {
		t.Fatalf("loss %v, want %v", loss, want)
	}
}

// gd lowers its loss and reaches success on a small case, at a width where the
// constructive method fails.
func TestGDReducesLossAndSucceeds(t *testing.T) {
	const L, k, d, eps = 16, 2, 8, 0.1
	set, err := NewGDSet(d, 1, DefaultGDOptions(eps))
	if err != nil {
		t.Fatal(err)
	}
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
		t.Logf("target %d: %d steps, loss %.3g -> %.3g, ratio err %.3g, leak %.3g", n, res.Iterations, res.InitialLoss, res.FinalLoss, p.RatioErr(), p.Leak())
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
	if _, _, _, err := set.LossGrad(mat.NewDense(3, 4, nil), handTarget()); err != nil {
		t.Errorf("a valid input gave %v", err)
	}
	if _, _, _, err := set.LossGrad(mat.NewDense(4, 4, nil), handTarget()); err == nil {
		t.Error("input with the wrong number of rows gave no error")
	}
	if _, err := set.Fit(handTarget(), nil); err == nil {
		t.Error("nil generator gave no error")
	}
}

func TestSoftplusSigmoid(t *testing.T) {
	for _, x := range []float64{-800, -30, -1.5, 0, 0.7, 30, 800} {
		sp, sg := softplusSigmoid(x)
		wantSp := math.Log1p(math.Exp(x))
		if x > 30 {
			wantSp = x // log(1 + e^x) = x + log(1 + e^-x), and e^-x < 1e-13 here
		}
		wantSg := 1 / (1 + math.Exp(-x))
		if math.Abs(sp-wantSp) > 1e-12*math.Max(1, wantSp) || math.Abs(sg-wantSg) > 1e-15 || math.IsNaN(sp) || math.IsNaN(sg) {
			t.Errorf("x = %v: softplus %v sigmoid %v, want %v and %v", x, sp, sg, wantSp, wantSg)
		}
	}
}
