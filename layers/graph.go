package layers

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/ops"
)

// Graph is one computation over shared parameters: a Gorgonia graph for batches of a fixed
// shape, with one node per parameter. Training, evaluation and sampling build separate
// Graphs from the same layers.
type Graph struct {
	G      *G.ExprGraph
	Dtype  tensor.Dtype
	Batch  int  // B, sequences per batch
	SeqLen int  // T, tokens per sequence
	Train  bool // dropout active
	nodes  map[*Param]*G.Node
	params []*Param // in order of first use
	masks  []*ops.DropoutMask
	bufs   map[*Buffer]*G.Node // input nodes of buffers
}

// NewGraph starts a graph for batches of B sequences of T tokens.
func NewGraph(dt tensor.Dtype, batch, seqLen int, train bool) (*Graph, error) {
	if err := checkDtype(dt); err != nil {
		return nil, err
	}
	if batch < 1 || seqLen < 1 {
		return nil, fmt.Errorf("layers: batch %d and sequence length %d, want both >= 1", batch, seqLen)
	}
	return &Graph{G: G.NewGraph(), Dtype: dt, Batch: batch, SeqLen: seqLen, Train: train, nodes: map[*Param]*G.Node{}}, nil
}

// Node returns the node of p in this graph, creating it (bound to p.Value) on first use.
func (g *Graph) Node(p *Param) *G.Node {
	if n, ok := g.nodes[p]; ok {
		return n
	}
	n := G.NodeFromAny(g.G, p.Value, G.WithName(p.Name))
	g.Bind(p, n)
	return n
}

// Bind makes n the node of p in this graph, for callers that create the parameter nodes
// themselves (gradient checks, Jacobians with respect to weights).
func (g *Graph) Bind(p *Param, n *G.Node) {
	if _, ok := g.nodes[p]; !ok {
		g.params = append(g.params, p)
	}
	g.nodes[p] = n
}

// Params returns the parameters used by the graph, in order of first use.
func (g *Graph) Params() []*Param { return g.params }

// Dropout applies dropout with probability p when the graph trains, and is the identity
// otherwise. The masks are redrawn with Resample.
func (g *Graph) Dropout(x *G.Node, p float64) (*G.Node, error) {
	if !g.Train || p == 0 {
		return x, nil
	}
	y, m, err := ops.Dropout(x, p)
	if err != nil {
		return nil, err
	}
	g.masks = append(g.masks, m)
	return y, nil
}

// Resample redraws every dropout mask of the graph for a step: mask i uses the PCG stream
// (seed, step * (number of masks) + i), so a step's masks depend only on (seed, step).
func (g *Graph) Resample(seed uint64, step int) {
	for i, m := range g.masks {
		m.Resample(seed, uint64(step)*uint64(len(g.masks))+uint64(i))
	}
}

// Rows is B*T, the number of rows of an activation matrix.
func (g *Graph) Rows() int { return g.Batch * g.SeqLen }
