package ops

import (
	"testing"

	G "gorgonia.org/gorgonia"

	"lipformer/internal/gradcheck"
	"lipformer/internal/ref"
)

func TestGELUMatchesReference(t *testing.T) {
	x := gradcheck.Rand(1, 3, 4, 5)
	got := run1(t, x, GELU)
	xs := x.Data().([]float64)
	for i, v := range xs {
		if w := ref.GELU(v); got[i]-w > 1e-15 || w-got[i] > 1e-15 {
			t.Fatalf("gelu(%v): got %v want %v", v, got[i], w)
		}
	}
}

func TestGELUGradient(t *testing.T) {
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return GELU(in[0])
	}, []gradcheck.Input{{Name: "x", Value: gradcheck.Rand(2, 3, 4, 5)}}, 3, 1e-5)
	assertGrad(t, "gelu", res, err)
}
