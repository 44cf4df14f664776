package layers

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
)

func TestEmbeddingGatherAndGradient(t *testing.T) {
	e := NewEmbedding("emb", 5, 3, 1, tensor.Float64, rng(4))
	ids := []int{4, 0, 4, 2}
	idt := tensor.New(tensor.WithShape(4), tensor.WithBacking(ids))
	res, err := gradcheck.Check(func(eg *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		g := wrap(eg, 1, 4)
		g.Bind(e.W, in[0])
		return e.Forward(g, in[1])
	}, []gradcheck.Input{{Name: "w", Value: e.W.Value}, {Name: "ids", Value: idt, NoGrad: true}}, 3, 1e-5)
	if err != nil || res.Max > 1e-6 {
		t.Fatalf("gradient: %v, %v", res, err)
	}
	g, _ := NewGraph(tensor.Float64, 1, 4, false)
	y, err := e.Forward(g, G.NodeFromAny(g.G, idt, G.WithName("ids")))
	if err != nil {
		t.Fatal(err)
	}
	m := G.NewTapeMachine(g.G)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	w := rowsOf(e.W.Value)
	for i, r := range rowsOf(y.Value().(*tensor.Dense)) {
		assertRows(t, "embedding", [][]float64{r}, [][]float64{w[ids[i]]}, 0)
	}
}

func TestPositionsRepeatPerSequence(t *testing.T) {
	e := NewEmbedding("pos", 6, 2, 1, tensor.Float64, rng(5))
	g, _ := NewGraph(tensor.Float64, 3, 4, false)
	y, err := e.Positions(g)
	if err != nil {
		t.Fatal(err)
	}
	m := G.NewTapeMachine(g.G)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	w := rowsOf(e.W.Value)
	for i, r := range rowsOf(y.Value().(*tensor.Dense)) {
		assertRows(t, "positions", [][]float64{r}, [][]float64{w[i%4]}, 0)
	}
	long, _ := NewGraph(tensor.Float64, 1, 7, false)
	if _, err := e.Positions(long); err == nil {
		t.Error("a sequence of 7 accepted with 6 positions")
	}
}
