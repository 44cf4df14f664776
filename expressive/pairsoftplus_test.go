package expressive

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
)

// softplusOf and sigmoid match their definitions to relative 1e-14, from values that
// underflow to the ones that would overflow e^x.
func TestSoftplusSigmoid(t *testing.T) {
	for _, x := range []float64{-800, -38, -36, -30, -1.5, 0, 0.7, 30, 36, 38, 800} {
		sp, sg := softplusOf(x), sigmoid(x)
		wantSp := math.Log1p(math.Exp(x))
		if x > 0 {
			wantSp = x + math.Log1p(math.Exp(-x)) // e^x overflows for x = 800
		}
		wantSg := 1 / (1 + math.Exp(-x))
		if math.Abs(sp-wantSp) > 1e-14*wantSp || math.Abs(sg-wantSg) > 1e-14*wantSg || math.IsNaN(sp) || math.IsNaN(sg) {
			t.Errorf("x = %v: softplus %v sigmoid %v, want %v and %v", x, sp, sg, wantSp, wantSg)
		}
	}
}

// composedPairSoftplusSum is pairSoftplusSum built from Gorgonia primitives: the (L, K, N)
// differences by BroadcastSub, softplus(x) = relu(x) + log(1 + e^-|x|), and a sum over the
// last axis. // a: (L, N); c: (L, K); result: (L, K)
func composedPairSoftplusSum(a, c *G.Node) (*G.Node, error) {
	L, N, K := a.Shape()[0], a.Shape()[1], c.Shape()[1]
	a3, err := G.Reshape(a, tensor.Shape{L, 1, N})
	if err != nil {
		return nil, err
	}
	c3, err := G.Reshape(c, tensor.Shape{L, K, 1})
	if err != nil {
		return nil, err
	}
	x, err := G.BroadcastSub(a3, c3, []byte{1}, []byte{2}) // (L, K, N)
	if err != nil {
		return nil, err
	}
	abs, err := G.Abs(x)
	if err != nil {
		return nil, err
	}
	neg, err := G.Neg(abs)
	if err != nil {
		return nil, err
	}
	e, err := G.Exp(neg)
	if err != nil {
		return nil, err
	}
	l, err := G.Log1p(e)
	if err != nil {
		return nil, err
	}
	r, err := G.Rectify(x)
	if err != nil {
		return nil, err
	}
	sp, err := G.Add(r, l)
	if err != nil {
		return nil, err
	}
	return G.Sum(sp, 2)
}

// pairSoftplusSum equals its composition from Gorgonia primitives, and its gradients with
// respect to a and c match finite differences, with differences from -60 to 60 and rows
// long enough to run in parallel.
func TestPairSoftplusSum(t *testing.T) {
	for _, c := range []struct {
		L, N, K int
		scale   float64
	}{{3, 5, 2, 1}, {4, 6, 3, 20}, {9, 8000, 2, 3}} {
		a := gradcheck.Rand(1, c.scale, c.L, c.N)
		cc := gradcheck.Rand(2, c.scale, c.L, c.K)
		in := []gradcheck.Input{{Name: "a", Value: a}, {Name: "c", Value: cc}}
		if c.N <= 6 {
			build := func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return pairSoftplusSum(in[0], in[1]) }
			res, err := gradcheck.Check(build, in, 5, 1e-6)
			if err != nil {
				t.Fatal(err)
			}
			if res.Max > 1e-8 {
				t.Errorf("%+v: relative gradient errors %v against finite differences", c, res.RelErr)
			}
		}
		got, gotGrads := runWithGrads(t, pairSoftplusSum, a, cc)
		want, wantGrads := runWithGrads(t, composedPairSoftplusSum, a, cc)
		for name, pair := range map[string][2][]float64{"value": {got, want}, "da": {gotGrads[0], wantGrads[0]}, "dc": {gotGrads[1], wantGrads[1]}} {
			for i := range pair[0] {
				if math.Abs(pair[0][i]-pair[1][i]) > 1e-12*math.Max(1, math.Abs(pair[1][i])) {
					t.Fatalf("%+v: %s[%d] = %v, composed %v", c, name, i, pair[0][i], pair[1][i])
				}
			}
		}
	}
	g := G.NewGraph()
	if _, err := pairSoftplusSum(G.NodeFromAny(g, gradcheck.Rand(3, 1, 4, 5)), G.NodeFromAny(g, gradcheck.Rand(4, 1, 3, 2))); err == nil {
		t.Error("inputs with different numbers of rows gave no error")
	}
}

// runWithGrads evaluates f(a, c) and the gradients of sum(f(a, c) * w), for a fixed w,
// with respect to a and c.
func runWithGrads(t *testing.T, f func(a, c *G.Node) (*G.Node, error), a, c *tensor.Dense) ([]float64, [2][]float64) {
	t.Helper()
	g := G.NewGraph()
	an := G.NodeFromAny(g, a, G.WithName("a"))
	cn := G.NodeFromAny(g, c, G.WithName("c"))
	y, err := f(an, cn)
	if err != nil {
		t.Fatal(err)
	}
	w := G.NodeFromAny(g, gradcheck.Rand(7, 1, y.Shape()...), G.WithName("w"))
	wy, err := G.HadamardProd(y, w)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := G.Sum(wy)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := G.Grad(loss, an, cn)
	if err != nil {
		t.Fatal(err)
	}
	var yv, da, dc G.Value
	G.Read(y, &yv)
	G.Read(grads[0], &da)
	G.Read(grads[1], &dc)
	if err := G.NewTapeMachine(g).RunAll(); err != nil {
		t.Fatal(err)
	}
	return yv.Data().([]float64), [2][]float64{da.Data().([]float64), dc.Data().([]float64)}
}
