package ops

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
)

// embedIDs are 7 ids into a table of 4 rows, with repeats and an unused row.
func embedIDs() *tensor.Dense {
	return tensor.New(tensor.WithShape(7), tensor.WithBacking([]int{2, 0, 2, 3, 0, 2, 3}))
}

func TestEmbedMatchesReference(t *testing.T) {
	table, ids := gradcheck.Rand(1, 1, 4, 3), embedIDs()
	got := run1(t, table, func(n *G.Node) (*G.Node, error) {
		return Embed(n, G.NodeFromAny(n.Graph(), ids, G.WithName("ids")))
	})
	var want [][]float64
	for _, id := range ids.Data().([]int) {
		want = append(want, rows(table)[id])
	}
	assertClose(t, "embed", got, want, 0)
}

func TestEmbedGradient(t *testing.T) {
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return Embed(in[0], in[1])
	}, []gradcheck.Input{{Name: "table", Value: gradcheck.Rand(2, 1, 4, 3)}, {Name: "ids", Value: embedIDs(), NoGrad: true}}, 3, 1e-5)
	assertGrad(t, "embed", res, err)
}

func TestEmbedRejectsBadIDs(t *testing.T) {
	table := gradcheck.Rand(1, 1, 4, 3)
	g := G.NewGraph()
	ids := tensor.New(tensor.WithShape(2), tensor.WithBacking([]int{1, 4}))
	y, err := Embed(G.NodeFromAny(g, table, G.WithName("t")), G.NodeFromAny(g, ids, G.WithName("ids")))
	if err != nil {
		t.Fatal(err)
	}
	_ = y
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err == nil {
		t.Error("id 4 of a table of 4 rows accepted")
	}
	if _, err := Embed(G.NodeFromAny(g, table, G.WithName("t2")), G.NodeFromAny(g, table, G.WithName("f"))); err == nil {
		t.Error("float ids accepted")
	}
}
