package expressive

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// lossGraph is the smooth surrogate of the precision measures minimised by the gd method,
// as a Gorgonia graph from the module's input X to a scalar. With a = log(1 + eps),
// b = log(1/eps), Z = (X W_Q)(X W_K)^T the logits, u_ij = z_ij - log A_ij and ubar_i the
// mean of u_i over the support S_i, the loss is the mean over rows i of
//
//	sum_{j in S_i} ((u_ij - ubar_i) / a)^2                                  (ratio errors)
//	+ sum_{j' in S_i} sum_{j not in S_i} softplus((z_ij - z_ij' + b) / a)      (leak)
//
// The first term is zero exactly when every ratio inside the support is right; each leak
// term is below log 2 exactly when that pair meets the leak condition, and keeps pushing
// (with slope decaying like e^{(z_ij - z_ij' + b)/a}) beyond it, which buys a margin.
//
// The graph stops at the logits: both terms depend on the attention matrix
// M = softmax_rows(Z) only through log(M_ij / M_ij') = z_ij - z_ij', in which the softmax
// normaliser cancels, so a softmax (and the logarithm of weights that underflow to 0)
// would add work and an overflow path without changing the value.
//
// X -> Z is composed of Gorgonia primitives and differentiated by G.Grad; Z -> loss is one
// op with a hand-written gradient (gdLoss, lossop.go), which computes the loss and dL/dZ
// in one parallel pass over the rows, with one exponential per column j shared by all the
// slots of its row (except for the columns whose logits fall between two support logits).
// The earlier tail after Z (a
// ByIndices gather, scaled and masked (L, L) copies, a pairwise-softplus op taking three
// exponentials per leak term, sums) made a gd step at L = 1024 about 2.7 times as costly
// in CPU time (BenchmarkGDStep).
//
// The support enters as plain Go data, so that one graph serves every target of its
// length L whose rows have at most K entries; SetTarget rewrites it in place.
type lossGraph struct {
	L, K int
	tg   *lossTarget // the target data, read by the loss op
	// Z and Loss are the logits (L, L) and the scalar loss.
	Z, Loss *G.Node
}

// newLossGraph builds the loss of a target with at most K entries per row on x's graph,
// for the module (wq, wk) at precision eps. // x: (L, n); wq, wk: (n, d)
func newLossGraph(x *G.Node, wq, wk *mat.Dense, K int, eps float64) (*lossGraph, error) {
	if x.Dims() != 2 || x.Dtype() != tensor.Float64 {
		return nil, fmt.Errorf("expressive: loss input X is %v %v, want a float64 matrix", x.Shape(), x.Dtype())
	}
	L, n := x.Shape()[0], x.Shape()[1]
	if r, _ := wq.Dims(); r != n {
		return nil, fmt.Errorf("expressive: input X is %d x %d, want width %d (rows of W_Q)", L, n, r)
	}
	if K < 1 || K > L {
		return nil, fmt.Errorf("expressive: %d entries per row, want 1 <= K <= L = %d", K, L)
	}
	g := x.Graph()
	lg := &lossGraph{L: L, K: K, tg: newLossTarget(L, K, eps)}
	input := func(t *tensor.Dense, name string) *G.Node { return G.NodeFromAny(g, t, G.WithName(name)) }
	q, err := G.Mul(x, input(denseTensor(wq), "W_Q")) // (L, d)
	if err != nil {
		return nil, err
	}
	k, err := G.Mul(x, input(denseTensor(wk), "W_K")) // (L, d)
	if err != nil {
		return nil, err
	}
	kt, err := G.Transpose(k) // (d, L)
	if err != nil {
		return nil, err
	}
	if lg.Z, err = G.Mul(q, kt); err != nil { // (L, L)
		return nil, err
	}
	if lg.Loss, err = gdLoss(lg.Z, lg.tg); err != nil {
		return nil, err
	}
	return lg, nil
}

// SetTarget writes the support and values of t into the graph's target data. t must have
// the graph's L and at most K entries per row.
func (lg *lossGraph) SetTarget(t *Target) error { return lg.tg.set(t) }

// maxRowSize is the largest number of entries in a row of t.
func maxRowSize(t *Target) int {
	K := 0
	for _, row := range t.Rows {
		K = max(K, len(row))
	}
	return K
}

// denseTensor copies m into a float64 tensor of the same shape.
func denseTensor(m *mat.Dense) *tensor.Dense {
	r, c := m.Dims()
	data := make([]float64, 0, r*c)
	for i := range r {
		data = append(data, m.RawRowView(i)...)
	}
	return tensor.New(tensor.WithShape(r, c), tensor.WithBacking(data))
}
