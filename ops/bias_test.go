package ops

import (
	"testing"

	G "gorgonia.org/gorgonia"

	"lipformer/internal/gradcheck"
)

func TestAddBiasMatchesReference(t *testing.T) {
	x, b := gradcheck.Rand(1, 1, 3, 4), gradcheck.Rand(2, 1, 4)
	got := run1(t, x, func(n *G.Node) (*G.Node, error) {
		return AddBias(n, G.NodeFromAny(n.Graph(), b, G.WithName("b")))
	})
	want := rows(x)
	for i := range want {
		want[i] = append([]float64(nil), want[i]...)
		for j := range want[i] {
			want[i][j] += b.Data().([]float64)[j]
		}
	}
	assertClose(t, "bias", got, want, 0)
}

func TestAddBiasGradient(t *testing.T) {
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return AddBias(in[0], in[1])
	}, []gradcheck.Input{{Name: "x", Value: gradcheck.Rand(3, 1, 5, 4)}, {Name: "b", Value: gradcheck.Rand(4, 1, 4)}}, 4, 1e-5)
	assertGrad(t, "bias", res, err)
}
