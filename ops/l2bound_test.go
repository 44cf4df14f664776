package ops

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/lipschitz"
)

func TestL2BoundInfMatchesLipschitzPackage(t *testing.T) {
	for _, h := range []int{1, 2, 4} {
		wq, wv, wo := gradcheck.Rand(1, 1, 8, 8), gradcheck.Rand(2, 1, 8, 8), gradcheck.Rand(3, 1, 8, 8)
		g := G.NewGraph()
		n := func(x *tensor.Dense, name string) *G.Node { return G.NodeFromAny(g, x, G.WithName(name)) }
		ub, err := L2BoundInf(n(wq, "wq"), n(wv, "wv"), n(wo, "wo"), h, lipschitz.PhiInv(16))
		if err != nil {
			t.Fatal(err)
		}
		m := G.NewTapeMachine(g)
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		m.Close()
		split := func(x *tensor.Dense) []*mat.Dense {
			s, err := lipschitz.HeadSlices(mat.NewDense(8, 8, x.Data().([]float64)), h)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		want, err := lipschitz.L2MHABoundInf(16, split(wq), split(wv), mat.NewDense(8, 8, wo.Data().([]float64)))
		if err != nil {
			t.Fatal(err)
		}
		if got := ub.Value().Data().(float64); math.Abs(got-want) > 1e-12*want {
			t.Errorf("H=%d: graph bound %.17g, lipschitz package %.17g", h, got, want)
		}
	}
}

func TestL2BoundInfGradient(t *testing.T) {
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return L2BoundInf(in[0], in[1], in[2], 2, lipschitz.PhiInv(32))
	}, []gradcheck.Input{
		{Name: "wq", Value: gradcheck.Rand(4, 1, 6, 6)},
		{Name: "wv", Value: gradcheck.Rand(5, 1, 6, 6)},
		{Name: "wo", Value: gradcheck.Rand(6, 1, 6, 6)},
	}, 1, 1e-6)
	assertGrad(t, "l2 bound", res, err)
}

// TestContractGradient covers both regimes: c/ub < 1 (scaled, gradient reaches the bound)
// and c/ub > 1 (identity, no gradient to the bound).
func TestContractGradient(t *testing.T) {
	for _, ub := range []float64{3, 0.2} {
		ubT := tensor.New(tensor.WithShape(), tensor.WithBacking([]float64{ub}))
		res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
			return Contract(in[0], in[1], 0.9)
		}, []gradcheck.Input{{Name: "x", Value: gradcheck.Rand(7, 1, 4, 3)}, {Name: "ub", Value: ubT}}, 2, 1e-6)
		assertGrad(t, "contract", res, err)
	}
}

func TestContractScales(t *testing.T) {
	x := gradcheck.Rand(8, 1, 2, 3)
	for _, c := range []struct{ ub, scale float64 }{{3, 0.3}, {0.5, 1}} {
		got := run1(t, x, func(n *G.Node) (*G.Node, error) {
			return Contract(n, G.NewScalar(n.Graph(), tensor.Float64, G.WithValue(c.ub), G.WithName("ub")), 0.9)
		})
		for i, v := range x.Data().([]float64) {
			if math.Abs(got[i]-c.scale*v) > 1e-15 {
				t.Fatalf("ub %v: got %v want %v", c.ub, got[i], c.scale*v)
			}
		}
	}
}
