package layers

import (
	"fmt"
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
	"lipformer/lipschitz"
	"lipformer/ops"
)

// Embedding maps integer ids to rows of a table W (V, D).
type Embedding struct {
	W *Param // (V, D)
	// Radius > 0 centres every row and projects it onto the ball of that radius before the
	// look-up (ops.BallNorm at a fixed radius), so that no two rows are more than 2 Radius
	// apart (docs/math.md, "The certified logit range"); 0 looks up the rows as they are.
	Radius float64
}

// NewEmbedding makes a table of n rows of width d drawn from N(0, std^2).
func NewEmbedding(name string, n, d int, std float64, dt tensor.Dtype, rng *rand.Rand) *Embedding {
	e := &Embedding{W: newParam(name, dt, false, n, d)}
	e.W.fillNormal(rng, std)
	return e
}

// Forward gathers the rows of ids, an Int vector (N), into (N, D).
func (e *Embedding) Forward(g *Graph, ids *G.Node) (*G.Node, error) {
	if ids.Dtype() != tensor.Int || !ids.Shape().IsVectorLike() {
		return nil, fmt.Errorf("%s: ids %v of %v, want an Int vector", e.W.Name, ids.Shape(), ids.Dtype())
	}
	table, err := e.table(g)
	if err != nil {
		return nil, err
	}
	return ops.Embed(table, ids)
}

// table adds to g the table the look-up reads (V, D): W, or W's rows centred and projected
// onto the ball of radius Radius.
func (e *Embedding) table(g *Graph) (*G.Node, error) {
	w := g.Node(e.W)
	if e.Radius == 0 {
		return w, nil
	}
	s := newBuffer(e.W.Name+".logradius", e.W.Value.Dtype(), 1) // (1), a constant of the graph
	s.setFloat64s([]float64{math.Log(e.Radius / math.Sqrt(float64(e.width())))})
	return ops.BallNorm(w, g.BufferNode(s))
}

// Rows returns a copy of the table the look-up reads, (V, D) row-major, in float64.
func (e *Embedding) Rows() []float64 {
	w := e.W.Float64s()
	if e.Radius == 0 {
		return w
	}
	rows := make([]float64, len(w))
	kernel.BallNormRows(rows, w, e.width(), e.Radius)
	return rows
}

// width is D.
func (e *Embedding) width() int { return e.W.Value.Shape()[1] }

// Positions returns the learned position embedding of a batch: rows 0..T-1 of the table,
// repeated for each of the B sequences, (B*T, D). T may not exceed the table's length.
func (e *Embedding) Positions(g *Graph) (*G.Node, error) {
	if n := e.W.Value.Shape()[0]; g.SeqLen > n {
		return nil, fmt.Errorf("%s: sequence length %d exceeds the %d learned positions", e.W.Name, g.SeqLen, n)
	}
	ids := make([]int, g.Rows())
	for i := range ids {
		ids[i] = i % g.SeqLen
	}
	pos := G.NodeFromAny(g.G, tensor.New(tensor.WithShape(len(ids)), tensor.WithBacking(ids)), G.WithName(e.W.Name+".ids"))
	return ops.Embed(g.Node(e.W), pos)
}

// Unembed maps x (N, D) to logits x W^T (N, V): the table used as the output layer, as in
// GPT-2 and nanoGPT, where the head shares the token embedding's weights.
func (e *Embedding) Unembed(g *Graph, x *G.Node) (*G.Node, error) {
	w := g.Node(e.W) // (V, D)
	if x.Dims() != 2 || x.Shape()[1] != w.Shape()[1] {
		return nil, fmt.Errorf("%s: unembed input %v, want (N, %d)", e.W.Name, x.Shape(), w.Shape()[1])
	}
	return ops.LinearT(x, nil, w)
}

// UnembedLipschitzInf is the inf-norm Lipschitz constant of Unembed, x -> x W^T: the largest
// absolute row sum of W.
func (e *Embedding) UnembedLipschitzInf() float64 {
	return lipschitz.LinearLipInf(denseOf(e.W).T())
}

// UnembedLipschitz2 is the 2-norm Lipschitz constant of Unembed: the spectral norm of W.
func (e *Embedding) UnembedLipschitz2() float64 { return lipschitz.Norm2(denseOf(e.W)) }

// Params returns the table.
func (e *Embedding) Params() []*Param { return []*Param{e.W} }
