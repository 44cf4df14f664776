package ops

import (
	"testing"

	G "gorgonia.org/gorgonia"

	"lipformer/internal/gradcheck"
	"lipformer/internal/ref"
)

func TestLayerNormMatchesReference(t *testing.T) {
	x, gamma, beta := gradcheck.Rand(1, 3, 4, 6), gradcheck.Rand(2, 1, 6), gradcheck.Rand(3, 1, 6)
	got := run1(t, x, func(n *G.Node) (*G.Node, error) {
		return LayerNorm(n, G.NodeFromAny(n.Graph(), gamma, G.WithName("g")), G.NodeFromAny(n.Graph(), beta, G.WithName("b")), 1e-5)
	})
	want, err := ref.LayerNorm(rows(x), gamma.Data().([]float64), beta.Data().([]float64), 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "layernorm", got, want, 1e-12)
}

func TestLayerNormGradient(t *testing.T) {
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return LayerNorm(in[0], in[1], in[2], 1e-5)
	}, []gradcheck.Input{
		{Name: "x", Value: gradcheck.Rand(4, 2, 5, 7)},
		{Name: "gamma", Value: gradcheck.Rand(5, 1, 7)},
		{Name: "beta", Value: gradcheck.Rand(6, 1, 7)},
	}, 2, 1e-5)
	assertGrad(t, "layernorm", res, err)
}
