package layers

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
)

func TestEmbeddingGatherAndGradient(t *testing.T) {
	e := NewEmbedding("emb", 5, 3, 1, tensor.Float64, rng(4))
	ids := []int{4, 0, 4, 2}
	w := rowsOf(e.W.Value)
	for i, r := range gatherChecked(t, e, ids) {
		assertRows(t, "embedding", [][]float64{r}, [][]float64{w[ids[i]]}, 0)
	}
}

// gatherChecked checks the gradient of e's look-up of ids against central differences
// and returns the rows it gathers, (len(ids), D).
func gatherChecked(t *testing.T, e *Embedding, ids []int) [][]float64 {
	t.Helper()
	idt := tensor.New(tensor.WithShape(len(ids)), tensor.WithBacking(ids))
	res, err := gradcheck.Check(func(eg *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		g := wrap(eg, 1, len(ids))
		g.Bind(e.W, in[0])
		return e.Forward(g, in[1])
	}, []gradcheck.Input{{Name: "w", Value: e.W.Value}, {Name: "ids", Value: idt, NoGrad: true}}, 3, 1e-5)
	if err != nil || res.Max > 1e-6 {
		t.Fatalf("gradient: %v, %v", res, err)
	}
	g, _ := NewGraph(tensor.Float64, 1, len(ids), false)
	y, err := e.Forward(g, G.NodeFromAny(g.G, idt, G.WithName("ids")))
	if err != nil {
		t.Fatal(err)
	}
	m := G.NewTapeMachine(g.G)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	return rowsOf(y.Value().(*tensor.Dense))
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

func TestUnembedForwardGradientAndBounds(t *testing.T) {
	e := NewEmbedding("tok", 4, 3, 1, tensor.Float64, rng(6)) // (V=4, D=3)
	x := tensor.New(tensor.WithShape(5, 3), tensor.WithBacking([]float64{
		0.3, -1, 2, 0, 0.5, -0.2, 1, 1, 1, -2, 0.1, 0.7, 0.4, 0.4, -0.9}))
	checkGrad(t, "unembed", []*Param{e.W}, x, 1, 5, e.Unembed)
	got := forward(t, x, 1, 5, e.Unembed)
	w := rowsOf(e.W.Value)
	want := make([][]float64, 5)
	for i, xi := range rowsOf(x) {
		for _, wv := range w {
			s := 0.0
			for d := range xi {
				s += xi[d] * wv[d]
			}
			want[i] = append(want[i], s)
		}
	}
	assertRows(t, "unembed", got, want, 1e-12)

	// The map is linear: its Jacobian is W itself (V, D), so the bounds are attained.
	e.W.Value = tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{1, -2, 3, 4}))
	if got := e.UnembedLipschitzInf(); got != 7 { // largest absolute row sum of W: 3+4
		t.Errorf("inf-norm constant %v, want 7", got)
	}
	if got := e.UnembedLipschitz2(); got < 5.11 || got > 5.12 { // sigma_max = 5.1167...
		t.Errorf("2-norm constant %v, want 5.1167", got)
	}
}

// TestEmbeddingInABallGatherAndGradient: with a radius, the look-up reads each row centred
// and projected onto the ball (rows outside land on its sphere, rows inside stay), matches
// the gradient of central differences, and Rows returns the table it reads.
func TestEmbeddingInABallGatherAndGradient(t *testing.T) {
	e := NewEmbedding("emb", 5, 3, 1, tensor.Float64, rng(4))
	e.Radius = 1.2
	w := e.W.Value.Data().([]float64)
	copy(w[6:9], []float64{0.1, -0.2, 0.3}) // row 2 inside the ball
	ids := []int{4, 0, 2, 2}
	want := make([][]float64, 5) // plain Go: centre, then scale to the radius when outside
	for r := range want {
		row := append([]float64(nil), w[r*3:(r+1)*3]...)
		mean := (row[0] + row[1] + row[2]) / 3
		var n float64
		for k := range row {
			row[k] -= mean
			n += row[k] * row[k]
		}
		if n = math.Sqrt(n); n > e.Radius {
			for k := range row {
				row[k] *= e.Radius / n
			}
		}
		want[r] = row
	}
	for i, r := range gatherChecked(t, e, ids) {
		assertRows(t, "embedding in a ball", [][]float64{r}, [][]float64{want[ids[i]]}, 1e-12)
	}
	rows := e.Rows()
	for r := range want {
		assertRows(t, "Rows", [][]float64{rows[r*3 : (r+1)*3]}, [][]float64{want[r]}, 1e-12)
	}
}
