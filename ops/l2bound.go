package ops

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// L2BoundInf is the inf-norm Lipschitz upper bound of tied L2 multihead attention on
// sequences of n tokens (SPEC section 2), as a differentiable scalar of the weights wq, wv
// and wo (D, D), head h in columns h*d..(h+1)*d:
//
//	(4 phiInv + 1/sqrt(d)) * ||W^O^T||_inf * max_h(||W^{Q,h}||_inf ||W^{Q,h}^T||_inf) * max_h ||W^{V,h}^T||_inf
//
// phiInv = W_0((n-1)/e) is passed in (see package lipschitz). The gradient is the
// subgradient through the maxima and absolute values, unique for weights in general
// position.
func L2BoundInf(wq, wv, wo *G.Node, heads int, phiInv float64) (*G.Node, error) {
	s := wq.Shape()
	if s.Dims() != 2 || s[0] != s[1] || !wv.Shape().Eq(s) || !wo.Shape().Eq(s) || heads < 1 || s[1]%heads != 0 {
		return nil, fmt.Errorf("l2 bound: wq %v, wv %v, wo %v with %d heads, want (D, D) each, D a multiple of the heads", s, wv.Shape(), wo.Shape(), heads)
	}
	if err := checkFloat("l2 bound", wq.Dtype()); err != nil {
		return nil, err
	}
	return G.ApplyOp(newL2BoundOp(heads, phiInv, -1), wq, wv, wo)
}

// l2BoundOp is L2BoundInf (part -1) or its gradient with respect to input part, taking
// (wq, wv, wo, g).
type l2BoundOp struct {
	baseOp
	heads  int
	phiInv float64
	part   int
}

func newL2BoundOp(heads int, phiInv float64, part int) *l2BoundOp {
	return &l2BoundOp{baseOp{name: fmt.Sprintf("L2BoundInf{H=%d,phiInv=%g,part=%d}", heads, phiInv, part)}, heads, phiInv, part}
}

// Arity is 3 forward, 4 backward.
func (op *l2BoundOp) Arity() int {
	if op.part < 0 {
		return 3
	}
	return 4
}

// Type maps three matrices to a scalar, or three matrices and a scalar to a matrix.
func (op *l2BoundOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := G.TensorType{Dims: 2, Of: a}
	if op.part < 0 {
		return hm.NewFnType(m, m, m, a)
	}
	return hm.NewFnType(m, m, m, a, m)
}

// InferShape is a scalar forward and (D, D) backward.
func (op *l2BoundOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if op.part < 0 {
		return tensor.ScalarShape(), nil
	}
	return in[0].(tensor.Shape).Clone(), nil
}

// Do computes the bound or its gradient.
func (op *l2BoundOp) Do(in ...G.Value) (G.Value, error) {
	w := make([]*tensor.Dense, 3)
	for i := range w {
		var err error
		if w[i], err = dense(op.name, in, i); err != nil {
			return nil, err
		}
	}
	dt := w[0].Dtype()
	f := l2BoundFactors(toFloat64s(w[0]), toFloat64s(w[1]), toFloat64s(w[2]), w[0].Shape()[0], op.heads, op.phiInv)
	if op.part < 0 {
		if dt == tensor.Float32 {
			return G.NewF32(float32(f.bound)), nil
		}
		return G.NewF64(f.bound), nil
	}
	g, err := scalar(in[3])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op.name, err)
	}
	grad := f.grad(op.part, g)
	out := op.out.get(nil, dt, w[0].Shape(), in)
	switch v := out.Data().(type) {
	case []float32:
		for i, x := range grad {
			v[i] = float32(x)
		}
	case []float64:
		copy(v, grad)
	}
	return out, nil
}

// DiffWRT is true for the three weights.
func (op *l2BoundOp) DiffWRT(int) []bool { return []bool{true, true, true} }

// SymDiff applies the three gradient ops.
func (op *l2BoundOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	ds := make(G.Nodes, 3)
	for i := range ds {
		var err error
		if ds[i], err = G.ApplyOp(newL2BoundOp(op.heads, op.phiInv, i), in[0], in[1], in[2], grad); err != nil {
			return nil, err
		}
	}
	return ds, nil
}

// toFloat64s copies a float tensor's data as float64.
func toFloat64s(t *tensor.Dense) []float64 {
	switch v := t.Data().(type) {
	case []float32:
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	case []float64:
		return v
	}
	return nil
}

// l2Bound holds the factors of the bound and where their maxima are attained.
type l2Bound struct {
	wq, wv, wo []float64 // (D, D) each
	d, hd      int       // D and the head width
	k          float64   // 4 phiInv + 1/sqrt(d)
	o, q, v    float64   // ||W^O^T||_inf, max_h r_h s_h, max_h ||W^{V,h}^T||_inf
	oCol       int       // column of W^O attaining o
	qRow, qCol int       // row attaining r_h* and column attaining s_h*
	qHead      int       // head h* attaining q
	r, s       float64   // ||W^{Q,h*}||_inf and ||W^{Q,h*}^T||_inf
	vCol       int       // column of W^V attaining v
	bound      float64
}

// l2BoundFactors evaluates the bound for (D, D) weights.
func l2BoundFactors(wq, wv, wo []float64, d, heads int, phiInv float64) l2Bound {
	b := l2Bound{wq: wq, wv: wv, wo: wo, d: d, hd: d / heads}
	b.k = 4*phiInv + 1/math.Sqrt(float64(b.hd))
	b.o, b.oCol = maxColSum(wo, d, 0, d)
	b.v, b.vCol = maxColSum(wv, d, 0, d)
	b.q = -1
	for h := 0; h < heads; h++ {
		r, row := maxRowSum(wq, d, h*b.hd, (h+1)*b.hd)
		s, col := maxColSum(wq, d, h*b.hd, (h+1)*b.hd)
		if r*s > b.q {
			b.q, b.r, b.s, b.qRow, b.qCol, b.qHead = r*s, r, s, row, col, h
		}
	}
	b.bound = b.k * b.o * b.q * b.v
	return b
}

// grad is g times the subgradient of the bound with respect to wq (0), wv (1) or wo (2).
func (b l2Bound) grad(part int, g float64) []float64 {
	out := make([]float64, b.d*b.d)
	sign := func(x float64) float64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return 0
	}
	switch part {
	case 0: // d(r s) = s dr + r ds
		c := g * b.k * b.o * b.v
		for j := b.qHead * b.hd; j < (b.qHead+1)*b.hd; j++ {
			out[b.qRow*b.d+j] += c * b.s * sign(b.wq[b.qRow*b.d+j])
		}
		for i := 0; i < b.d; i++ {
			out[i*b.d+b.qCol] += c * b.r * sign(b.wq[i*b.d+b.qCol])
		}
	case 1:
		c := g * b.k * b.o * b.q
		for i := 0; i < b.d; i++ {
			out[i*b.d+b.vCol] = c * sign(b.wv[i*b.d+b.vCol])
		}
	case 2:
		c := g * b.k * b.q * b.v
		for i := 0; i < b.d; i++ {
			out[i*b.d+b.oCol] = c * sign(b.wo[i*b.d+b.oCol])
		}
	}
	return out
}

// maxColSum is the largest absolute column sum of columns lo..hi of a (d, d) matrix, and
// its column.
func maxColSum(w []float64, d, lo, hi int) (float64, int) {
	best, col := -1.0, lo
	for j := lo; j < hi; j++ {
		var s float64
		for i := 0; i < d; i++ {
			s += math.Abs(w[i*d+j])
		}
		if s > best {
			best, col = s, j
		}
	}
	return best, col
}

// maxRowSum is the largest absolute row sum over columns lo..hi of a (d, d) matrix, and its
// row.
func maxRowSum(w []float64, d, lo, hi int) (float64, int) {
	best, row := -1.0, 0
	for i := 0; i < d; i++ {
		var s float64
		for j := lo; j < hi; j++ {
			s += math.Abs(w[i*d+j])
		}
		if s > best {
			best, row = s, i
		}
	}
	return best, row
}
