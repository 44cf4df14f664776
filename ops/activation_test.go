package ops

import (
	"math"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"

	"lipformer/internal/gradcheck"
)

// TestMaxMinOp: the MaxMin op sorts each pair of a row, the larger first, its gradient
// agrees with central differences, an odd last dimension is refused by name, and the
// activations' names parse back.
func TestMaxMinOp(t *testing.T) {
	x := gradcheck.Rand(4, 1, 3, 6)
	got := run1(t, x, MaxMin)
	xs := x.Data().([]float64)
	for i := 0; i < len(xs); i += 2 {
		if got[i] != math.Max(xs[i], xs[i+1]) || got[i+1] != math.Min(xs[i], xs[i+1]) {
			t.Fatalf("pair %d: MaxMin(%v, %v) = %v, %v", i/2, xs[i], xs[i+1], got[i], got[i+1])
		}
	}
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return MaxMin(in[0])
	}, []gradcheck.Input{{Name: "x", Value: gradcheck.Rand(5, 1, 4, 8)}}, 3, 1e-6)
	assertGrad(t, "maxmin", res, err)
	g := G.NewGraph()
	odd := G.NodeFromAny(g, gradcheck.Rand(6, 1, 2, 5))
	if _, err := MaxMin(odd); err == nil || !strings.Contains(err.Error(), "even") {
		t.Errorf("odd width: %v, want an error", err)
	}
	for _, a := range []Activation{ActELU, ActMaxMin} {
		if b, err := ParseActivation(a.String()); err != nil || b != a {
			t.Errorf("%v parses to %v, %v", a, b, err)
		}
	}
	if _, err := ParseActivation("relu"); err == nil || !strings.Contains(err.Error(), "relu") {
		t.Errorf("relu: %v, want an error naming it", err)
	}
}
