package expressive

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// maskShift moves an excluded leak term's argument to about -maskShift, where softplus
// and its derivative are exactly 0; two of them add up to a finite number.
const maskShift = math.MaxFloat64 / 4

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
// The support enters as data, so that one graph serves every target of its length L whose
// rows have at most K entries: row i's entries are put in slots s = 0..K-1, and the slots
// beyond |S_i| repeat the first entry with weight 0. SetTarget rebinds the data in place.
// The leak is summed over all (i, s, j) with the excluded terms (j in S_i, or slot s
// unused) pushed to softplus(-maskShift), which is exactly 0 with derivative exactly 0.
//
// Everything is composed of Gorgonia primitives and differentiated by G.Grad except the
// sums over j of the leak terms, the op pairSoftplusSum with a hand-written backward:
// composed (a pairwise-difference tensor, softplus, a sum), they allocate, write and
// read several (L, K, L) tensors per step: 1.5 to 2 times the time per step at L = 1024.
type lossGraph struct {
	L, K int
	a, b float64
	// Target data, bound to input nodes and overwritten by SetTarget.
	idx      *tensor.Dense // (L*K,) int: i*L + column of slot s of row i, the flat index in Z
	logA     *tensor.Dense // (L, K): log A of the slot's entry
	mean     *tensor.Dense // (L, K): 1/|S_i| on used slots, 0 on padding
	invA     *tensor.Dense // (L, K): 1/a on used slots, 0 on padding
	colBias  *tensor.Dense // (L, L): -maskShift where j is in S_i, else 0
	slotBias *tensor.Dense // (L, K): maskShift on unused slots, else 0
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
	lg := &lossGraph{
		L: L, K: K, a: math.Log1p(eps), b: -math.Log(eps),
		idx:      tensor.New(tensor.Of(tensor.Int), tensor.WithShape(L*K)),
		logA:     tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(L, K)),
		mean:     tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(L, K)),
		invA:     tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(L, K)),
		colBias:  tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(L, L)),
		slotBias: tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(L, K)),
	}
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
	// ByIndices gathers rows: its gradient is wrong on a vector (Gorgonia v0.9.18), right
	// on the rows of a matrix, so Z is gathered as a column.
	flat, err := G.Reshape(lg.Z, tensor.Shape{L * L, 1}) // (L*L, 1)
	if err != nil {
		return nil, err
	}
	picked, err := G.ByIndices(flat, input(lg.idx, "slots"), 0) // (L*K, 1)
	if err != nil {
		return nil, err
	}
	zs, err := G.Reshape(picked, tensor.Shape{L, K}) // (L, K): logits at the slots
	if err != nil {
		return nil, err
	}
	ratio, err := lg.ratioErrors(zs, input(lg.logA, "logA"), input(lg.mean, "mean"), input(lg.invA, "1/a"))
	if err != nil {
		return nil, fmt.Errorf("expressive: gd loss, ratio errors: %w", err)
	}
	leak, err := lg.leak(lg.Z, zs, input(lg.colBias, "colBias"), input(lg.slotBias, "slotBias"))
	if err != nil {
		return nil, fmt.Errorf("expressive: gd loss, leak: %w", err)
	}
	sum, err := G.Add(ratio, leak)
	if err != nil {
		return nil, err
	}
	if lg.Loss, err = G.Mul(sum, G.NewConstant(1/float64(L))); err != nil {
		return nil, err
	}
	return lg, nil
}

// ratioErrors is sum_is (r_is)^2 with r_is = (u_is - ubar_i) / a on used slots, from the
// logits at the slots zs and the target data. // zs, logA, mean, invA: (L, K)
func (lg *lossGraph) ratioErrors(zs, logA, mean, invA *G.Node) (*G.Node, error) {
	u, err := G.Sub(zs, logA) // (L, K)
	if err != nil {
		return nil, err
	}
	um, err := G.HadamardProd(u, mean) // (L, K)
	if err != nil {
		return nil, err
	}
	ubar, err := G.Sum(um, 1) // (L,)
	if err != nil {
		return nil, err
	}
	dev, err := G.BroadcastSub(u, ubar, nil, []byte{1}) // (L, K)
	if err != nil {
		return nil, err
	}
	r, err := G.HadamardProd(dev, invA) // (L, K)
	if err != nil {
		return nil, err
	}
	r2, err := G.Square(r) // (L, K)
	if err != nil {
		return nil, err
	}
	return G.Sum(r2)
}

// leak is sum_isj softplus((z_ij + colBias_ij) / a - (z_is - b) / a - slotBias_is), the
// leak over used slots s and j off the support, from the logits z, the logits at the slots
// zs and the masks. // z, colBias: (L, L); zs, slotBias: (L, K)
func (lg *lossGraph) leak(z, zs, colBias, slotBias *G.Node) (*G.Node, error) {
	zScaled, err := G.Mul(z, G.NewConstant(1/lg.a)) // (L, L)
	if err != nil {
		return nil, err
	}
	zMasked, err := G.Add(zScaled, colBias) // (L, L)
	if err != nil {
		return nil, err
	}
	zsScaled, err := G.Mul(zs, G.NewConstant(1/lg.a)) // (L, K)
	if err != nil {
		return nil, err
	}
	shift, err := G.Sub(zsScaled, G.NewConstant(lg.b/lg.a)) // (L, K)
	if err != nil {
		return nil, err
	}
	if shift, err = G.Add(shift, slotBias); err != nil { // (L, K)
		return nil, err
	}
	rows, err := pairSoftplusSum(zMasked, shift) // (L, K)
	if err != nil {
		return nil, err
	}
	return G.Sum(rows)
}

// SetTarget writes the support and values of t into the graph's target data. t must have
// the graph's L and at most K entries per row.
func (lg *lossGraph) SetTarget(t *Target) error {
	if t.L != lg.L {
		return fmt.Errorf("expressive: target has L = %d, the loss graph %d", t.L, lg.L)
	}
	idx := lg.idx.Ints()
	logA, mean, invA := lg.logA.Float64s(), lg.mean.Float64s(), lg.invA.Float64s()
	colBias, slotBias := lg.colBias.Float64s(), lg.slotBias.Float64s()
	clear(colBias)
	for i, row := range t.Rows {
		if len(row) > lg.K {
			return fmt.Errorf("expressive: target row %d has %d entries, the loss graph at most %d", i, len(row), lg.K)
		}
		for s := range lg.K {
			p := i*lg.K + s
			e, used := row[0], s < len(row)
			if used {
				e = row[s]
				colBias[i*lg.L+e.Col] = -maskShift
			}
			idx[p], logA[p] = i*lg.L+e.Col, math.Log(e.Val)
			mean[p], invA[p], slotBias[p] = 0, 0, maskShift
			if used {
				mean[p], invA[p], slotBias[p] = 1/float64(len(row)), 1/lg.a, 0
			}
		}
	}
	return nil
}

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
