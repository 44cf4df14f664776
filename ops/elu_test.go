package ops

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"

	"lipformer/internal/gradcheck"
)

func TestELUMatchesReference(t *testing.T) {
	x := gradcheck.Rand(1, 3, 4, 5)
	got := run1(t, x, ELU)
	for i, v := range x.Data().([]float64) {
		want := v
		if v <= 0 {
			want = math.Exp(v) - 1
		}
		if d := got[i] - want; d > 1e-15 || d < -1e-15 {
			t.Fatalf("elu(%v): got %v want %v", v, got[i], want)
		}
	}
}

func TestELUGradient(t *testing.T) {
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return ELU(in[0])
	}, []gradcheck.Input{{Name: "x", Value: gradcheck.Rand(2, 3, 4, 5)}}, 3, 1e-5)
	assertGrad(t, "elu", res, err)
}
