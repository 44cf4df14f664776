package expressive

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
)

// opCase is a target and a scale of random logits for the loss op's tests. At eps = 0.1 a
// leak argument is x = (z_ij - z_is + 2.3) / 0.095: logits of sd 0.3 put most |x| below 10
// (math.Log1p and the series of log1pRecip, columns between the support logits), sd 2 and
// 8 put most of them beyond 36.7 (the tiny branches).
type opCase struct {
	tg *Target
	K  int // slots per row: more than the largest row pads
	sd float64
}

// opCases returns targets with one to four entries per row, with and without padded
// slots, at the three scales of opCase, on L = 7 (and L = 300 with parallel rows if big).
func opCases(t *testing.T, big bool) []opCase {
	t.Helper()
	var cases []opCase
	add := func(tg *Target, K int) {
		for _, sd := range []float64{0.3, 2, 8} {
			cases = append(cases, opCase{tg, K, sd})
		}
	}
	add(handTarget(), 3)
	add(handTarget(), 4)
	Ls := []int{7}
	if big {
		Ls = append(Ls, 300)
	}
	for _, L := range Ls {
		for _, k := range []int{1, 2, 4} {
			tg, err := RandomTarget(L, k, 20, rand.New(rand.NewPCG(uint64(L), uint64(k))))
			if err != nil {
				t.Fatal(err)
			}
			add(tg, maxRowSize(tg))
		}
	}
	return cases
}

// newOpTarget is the loss op's data for c's target at eps.
func newOpTarget(t *testing.T, c opCase, eps float64) *lossTarget {
	t.Helper()
	lt := newLossTarget(c.tg.L, c.K, eps)
	if err := lt.set(c.tg); err != nil {
		t.Fatal(err)
	}
	return lt
}

// The gradient of the loss op with respect to the logits matches central finite
// differences in float64, in every branch of its kernel (see opCase).
func TestGDLossOpFiniteDifferences(t *testing.T) {
	const eps = 0.1
	for n, c := range opCases(t, false) {
		lt := newOpTarget(t, c, eps)
		z := gradcheck.Rand(uint64(n), c.sd, c.tg.L, c.tg.L)
		build := func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return gdLoss(in[0], lt) }
		res, err := gradcheck.Check(build, []gradcheck.Input{{Name: "Z", Value: z}}, 1, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		if res.Max > 1e-7 {
			t.Errorf("L = %d, K = %d, sd %v: relative error %.3g against finite differences", c.tg.L, c.K, c.sd, res.Max)
		}
	}
}

// The loss op's value and gradient equal the plain-Go reference refLoss, to 1e-12
// relative, in every branch of its kernel, with rows shared among goroutines (L = 300),
// and do not depend on the number of goroutines.
func TestGDLossOpMatchesReference(t *testing.T) {
	const eps = 0.1
	for n, c := range opCases(t, true) {
		name := fmt.Sprintf("L = %d, K = %d, sd %v", c.tg.L, c.K, c.sd)
		z := gradcheck.Rand(uint64(n), c.sd, c.tg.L, c.tg.L)
		loss, grad := runGDLossOp(t, newOpTarget(t, c, eps), z)
		wantLoss, wantGrad := refLoss(mat.NewDense(c.tg.L, c.tg.L, z.Float64s()), c.tg, eps)
		if math.Abs(loss-wantLoss) > 1e-12*math.Abs(wantLoss) {
			t.Errorf("%s: loss %.17g, reference %.17g", name, loss, wantLoss)
		}
		var diff mat.Dense
		diff.Sub(mat.NewDense(c.tg.L, c.tg.L, grad), wantGrad)
		if e := mat.Norm(&diff, 2) / mat.Norm(wantGrad, 2); e > 1e-12 {
			t.Errorf("%s: gradient differs from the reference by %.3g (relative)", name, e)
		}
		if c.tg.L > 7 {
			prev := runtime.GOMAXPROCS(1)
			loss1, grad1 := runGDLossOp(t, newOpTarget(t, c, eps), z)
			runtime.GOMAXPROCS(prev)
			if loss1 != loss || !mat.Equal(mat.NewDense(c.tg.L, c.tg.L, grad1), mat.NewDense(c.tg.L, c.tg.L, grad)) {
				t.Errorf("%s: one goroutine gave a different loss or gradient", name)
			}
		}
	}
}

// The loss op's branches for leak terms below tiny match refLoss to 1e-12 relative when
// they make up the whole loss: single-entry rows (no ratio error) whose off-support logits
// are all far below (x < -70) or all far above (x > 100) the support logit.
func TestGDLossOpTinyTerms(t *testing.T) {
	const L, eps = 5, 0.1
	tg := &Target{L: L, Rows: make([][]Entry, L)}
	for i := range L {
		tg.Rows[i] = []Entry{{Col: i, Val: 1}}
	}
	for _, off := range []float64{-9, 12} {
		z := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(L, L))
		zs := z.Float64s()
		for i := range L {
			for j := range L {
				if j != i {
					zs[i*L+j] = off + 0.3*float64(i) - 0.1*float64(j)
				}
			}
		}
		loss, grad := runGDLossOp(t, newOpTarget(t, opCase{tg, 1, 0}, eps), z)
		wantLoss, wantGrad := refLoss(mat.NewDense(L, L, zs), tg, eps)
		if math.Abs(loss-wantLoss) > 1e-12*math.Abs(wantLoss) {
			t.Errorf("off-support logits near %v: loss %.17g, reference %.17g", off, loss, wantLoss)
		}
		for k, v := range wantGrad.RawMatrix().Data {
			if math.Abs(grad[k]-v) > 1e-12*math.Abs(v) {
				t.Errorf("off-support logits near %v: gradient[%d] = %.17g, reference %.17g", off, k, grad[k], v)
			}
		}
	}
}

// runGDLossOp evaluates the loss op on z and its gradient with respect to z (dy = 1).
// // z, grad: (L, L)
func runGDLossOp(t *testing.T, lt *lossTarget, z *tensor.Dense) (loss float64, grad []float64) {
	t.Helper()
	g := G.NewGraph()
	zn := G.NodeFromAny(g, z, G.WithName("Z"))
	out, err := gdLoss(zn, lt)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := G.Grad(out, zn)
	if err != nil {
		t.Fatal(err)
	}
	var lv, gv G.Value
	G.Read(out, &lv)
	G.Read(grads[0], &gv)
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	return lv.Data().(float64), gv.Data().([]float64)
}

// gdLoss rejects logits of the wrong shape or type, and lossTarget.set targets that do not
// fit its shape or whose columns do not increase.
func TestGDLossOpErrors(t *testing.T) {
	lt := newLossTarget(3, 2, 0.1)
	g := G.NewGraph()
	for _, z := range []*G.Node{
		G.NewMatrix(g, tensor.Float64, G.WithShape(3, 4), G.WithName("wide")),
		G.NewMatrix(g, tensor.Float32, G.WithShape(3, 3), G.WithName("f32")),
	} {
		if _, err := gdLoss(z, lt); err == nil {
			t.Errorf("logits %v %v gave no error", z.Shape(), z.Dtype())
		}
	}
	for _, tg := range []*Target{
		handTarget(), // a row of 3 entries
		{L: 2, Rows: [][]Entry{{{Col: 0, Val: 1}}, {{Col: 1, Val: 1}}}},
		{L: 3, Rows: [][]Entry{{{Col: 1, Val: 1}, {Col: 0, Val: 1}}, {{Col: 1, Val: 1}}, {{Col: 2, Val: 1}}}},
		{L: 3, Rows: [][]Entry{{{Col: 3, Val: 1}}, {{Col: 1, Val: 1}}, {{Col: 2, Val: 1}}}},
		{L: 3, Rows: [][]Entry{{{Col: 0, Val: 1}}, {}, {{Col: 2, Val: 1}}}},
	} {
		if err := lt.set(tg); err == nil {
			t.Errorf("target %v gave no error", tg.Rows)
		}
	}
}

// softplusSigmoid matches the definitions of softplus and sigmoid to relative 1e-14, from
// values that underflow to the ones that would overflow e^x, on both sides of the
// thresholds of log1pRecip (|x| = 10 log 2) and tiny (|x| = 53 log 2); below tiny, the
// rounded log(1 + e), 1 / (1 + e) and e / (1 + e) are e, 1 and e, as the loss op assumes.
func TestSoftplusSigmoid(t *testing.T) {
	xs := []float64{-800, -38, -36, -30, -1.5, 0, 0.7, 30, 36, 38, 800}
	for _, b := range []float64{10 * math.Ln2, 53 * math.Ln2} {
		xs = append(xs, b-1e-9, b+1e-9, -b-1e-9, -b+1e-9)
	}
	for _, x := range xs {
		sp, sg := softplusSigmoid(x)
		wantSp := math.Log1p(math.Exp(x))
		if x > 0 {
			wantSp = x + math.Log1p(math.Exp(-x)) // e^x overflows for x = 800
		}
		wantSg := 1 / (1 + math.Exp(-x))
		if math.Abs(sp-wantSp) > 1e-14*wantSp || math.Abs(sg-wantSg) > 1e-14*wantSg || math.IsNaN(sp) || math.IsNaN(sg) {
			t.Errorf("x = %v: softplus %v sigmoid %v, want %v and %v", x, sp, sg, wantSp, wantSg)
		}
		if e := math.Exp(-math.Abs(x)); e < tiny && (math.Log1p(e) != e || 1/(1+e) != 1 || e/(1+e) != e) {
			t.Errorf("e = %v below tiny: log1p(e) = %v, 1/(1+e) = %v, want e and 1", e, math.Log1p(e), 1/(1+e))
		}
	}
}

// log1pRecip is within 2 ulp of math.Log1p and 1 / (1 + e) on [0, 1], in particular on
// both sides of 2^-10, where it switches from the series.
func TestLog1pRecip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for n := range 200000 {
		e := math.Ldexp(1+rng.Float64(), -rng.IntN(60)-1) // [2^-60, 1)
		if n%2 == 0 {
			e = 0x1p-10 * (1 + (rng.Float64()-0.5)*1e-3)
		}
		l, r := log1pRecip(e)
		wantL, wantR := math.Log1p(e), 1/(1+e)
		if math.Abs(l-wantL) > 0x1p-52*wantL || math.Abs(r-wantR) > 0x1p-52*wantR {
			t.Fatalf("e = %v: %v, %v, want %v, %v", e, l, r, wantL, wantR)
		}
	}
}

// expNonPos is within 7e-16 relative of math.Exp on [-745, 0], is 0 below the
// underflow, 1 at 0 and NaN for NaN.
func TestExpNonPos(t *testing.T) {
	const n = 2000000
	for i := range n + 1 {
		x := -745 * float64(i) / n
		if got, want := expNonPos(x), math.Exp(x); math.Abs(got-want) > 7e-16*want {
			t.Fatalf("x = %v: %v, want %v", x, got, want)
		}
	}
	if expNonPos(-800) != 0 || expNonPos(math.Inf(-1)) != 0 || expNonPos(0) != 1 || !math.IsNaN(expNonPos(math.NaN())) {
		t.Error("wrong at -800, -Inf, 0 or NaN")
	}
}
