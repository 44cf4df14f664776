package ops

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// L2BoundInf is the inf-norm Lipschitz upper bound of tied L2 multihead attention on
// sequences of n tokens (docs/math.md, "Kim et al.'s inf-norm bound"), as a differentiable scalar of the weights wq, wv
// and wo (D, D), head h in columns h*d..(h+1)*d:
//
//	(4 phiInv + 1/sqrt(d)) * ||W^O^T||_inf * max_h(||W^{Q,h}||_inf ||W^{Q,h}^T||_inf) * max_h ||W^{V,h}^T||_inf
//
// phiInv = W_0((n-1)/e) is passed in (see package lipschitz). The gradient is the
// subgradient through the maxima and absolute values, unique for weights in general
// position.
func L2BoundInf(wq, wv, wo *G.Node, heads int, phiInv float64) (*G.Node, error) {
	return l2Bound(wq, wv, wo, heads, phiInv, BoundKim)
}

// L2BoundInfProduct is the product-form inf-norm bound of tied L2 multihead attention on
// sequences of n tokens (docs/math.md, "The product bound"), as a differentiable scalar of
// wq, wv and wo (D, D), head h in columns h*d..(h+1)*d:
//
//	(4 sqrt(d) phiInv + 1) * max_e sum_h ||W^{Q,h}^T||_inf * sum_r |N_h[r, e]|
//
// with N_h = (W^{Q,h})^T W^{V,h} W^{O,h} / sqrt(d) (d, D) and W^{O,h} rows h*d..(h+1)*d of
// W^O. phiInv = W_0((n-1)/e). The gradient is the subgradient through the maxima and
// absolute values.
func L2BoundInfProduct(wq, wv, wo *G.Node, heads int, phiInv float64) (*G.Node, error) {
	return l2Bound(wq, wv, wo, heads, phiInv, BoundProduct)
}

// BoundForm selects the bound of tied L2 attention that a contractive layer divides by.
type BoundForm int

const (
	// BoundKim is Kim et al.'s bound: a product of separate norms of W^Q, W^Q^T, W^V and W^O.
	BoundKim BoundForm = iota
	// BoundProduct is the product bound: norms of W^Q^T and of the product N = W^Q^T W^V W^O.
	BoundProduct
	// BoundTok2 is the token-norm bound (L2BoundTok2): spectral norms of W^{Q,h} and N, in the
	// norm max_i ||x_i||_2 rather than the inf-norm.
	BoundTok2
)

// BoundForms lists every bound form.
var BoundForms = []BoundForm{BoundKim, BoundProduct, BoundTok2}

// MarshalText writes the name.
func (f BoundForm) MarshalText() ([]byte, error) {
	if f < BoundKim || f > BoundTok2 {
		return nil, fmt.Errorf("bound form %d is not kim, product or token2", int(f))
	}
	return []byte(f.String()), nil
}

// UnmarshalText parses "kim", "product" or "token2".
func (f *BoundForm) UnmarshalText(b []byte) error {
	for _, x := range BoundForms {
		if x.String() == string(b) {
			*f = x
			return nil
		}
	}
	return fmt.Errorf("l2 bound %q, want kim, product or token2", b)
}

// String is "kim", "product" or "token2".
func (f BoundForm) String() string {
	switch f {
	case BoundProduct:
		return "product"
	case BoundTok2:
		return "token2"
	}
	return "kim"
}

// l2Bound checks the arguments of the L2 bounds and applies the bound of the given form.
func l2Bound(wq, wv, wo *G.Node, heads int, phiInv float64, form BoundForm) (*G.Node, error) {
	s := wq.Shape()
	if s.Dims() != 2 || s[0] != s[1] || !wv.Shape().Eq(s) || !wo.Shape().Eq(s) || heads < 1 || s[1]%heads != 0 {
		return nil, fmt.Errorf("l2 %v bound: wq %v, wv %v, wo %v with %d heads, want (D, D) each, D a multiple of the heads", form, s, wv.Shape(), wo.Shape(), heads)
	}
	if err := checkFloat("l2 bound", wq.Dtype()); err != nil {
		return nil, err
	}
	if form != BoundKim && form != BoundProduct {
		return nil, fmt.Errorf("l2 bound: form %v, want kim or product (token2 is L2BoundTok2)", form)
	}
	return G.ApplyOp(newL2BoundOp(heads, phiInv, form, -1), wq, wv, wo)
}

// l2BoundOp is an L2 bound (part -1) or its gradient with respect to input part, which
// takes (wq, wv, wo, the bound, g): the bound only so that it runs after the bound of the
// same run. As tok2Op's, a differentiated bound shares keptFactors with its gradient ops:
// it keeps its factors there, and each gradient op reuses them if the bound wrote them
// since that op's last run, and recomputes them otherwise.
type l2BoundOp struct {
	baseOp
	heads  int
	phiInv float64
	form   BoundForm
	part   int
	st     *keptFactors // shared by a differentiated bound and its gradient ops: a boundFactors
	read   reader       // gradient: the last factors it took
}

func newL2BoundOp(heads int, phiInv float64, form BoundForm, part int) *l2BoundOp {
	return &l2BoundOp{baseOp: baseOp{name: fmt.Sprintf("L2BoundInf{H=%d,phiInv=%g,form=%v,part=%d}", heads, phiInv, form, part)}, heads: heads, phiInv: phiInv, form: form, part: part}
}

// gradOp returns the gradient op of part of the bound op, sharing op's state, in which op
// then keeps its factors.
func (op *l2BoundOp) gradOp(part int) *l2BoundOp {
	if op.st == nil {
		op.st = &keptFactors{}
	}
	back := newL2BoundOp(op.heads, op.phiInv, op.form, part)
	back.st = op.st
	return back
}

// Arity is 3 forward, 5 backward.
func (op *l2BoundOp) Arity() int {
	if op.part < 0 {
		return 3
	}
	return 5
}

// Type maps three matrices to a scalar, or three matrices and two scalars to a matrix.
func (op *l2BoundOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := G.TensorType{Dims: 2, Of: a}
	if op.part < 0 {
		return hm.NewFnType(m, m, m, a)
	}
	return hm.NewFnType(m, m, m, a, a, m)
}

// InferShape is a scalar forward and (D, D) backward.
func (op *l2BoundOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if op.part < 0 {
		return tensor.ScalarShape(), nil
	}
	return in[0].(tensor.Shape).Clone(), nil
}

// Do computes the bound or its gradient, reading the weights where they are and writing a
// gradient into the op's kept buffer.
func (op *l2BoundOp) Do(in ...G.Value) (G.Value, error) {
	w := make([]*tensor.Dense, 3)
	for i := range w {
		var err error
		if w[i], err = dense(op.name, in, i); err != nil {
			return nil, err
		}
	}
	g := 0.0
	if op.part >= 0 {
		var err error
		if g, err = scalar(in[4]); err != nil {
			return nil, fmt.Errorf("%s: %w", op.name, err)
		}
	}
	switch w[0].Dtype() {
	case tensor.Float32:
		return l2BoundDo[float32](op, w, in, g)
	case tensor.Float64:
		return l2BoundDo[float64](op, w, in, g)
	}
	return nil, fmt.Errorf("%s: dtype %v, want float32 or float64", op.name, w[0].Dtype())
}

// l2BoundDo is Do for weights w of element type T: the bound as a scalar, or g times its
// gradient with respect to w[op.part] in the kept buffer.
func l2BoundDo[T kernel.Float](op *l2BoundOp, w []*tensor.Dense, in []G.Value, g float64) (G.Value, error) {
	wq, wv, wo, d := data[T](w[0]), data[T](w[1]), data[T](w[2]), w[0].Shape()[0]
	factors := func() (boundFactors[T], error) {
		switch op.form {
		case BoundProduct:
			return l2ProductFactors(wq, wv, wo, d, op.heads, op.phiInv), nil
		case BoundKim:
			return l2BoundFactors(wq, wv, wo, d, op.heads, op.phiInv), nil
		}
		return nil, fmt.Errorf("%s: the op computes the kim and product bounds, not %v", op.name, op.form)
	}
	if op.part < 0 {
		f, err := factors()
		if err != nil {
			return nil, err
		}
		if op.st != nil {
			op.st.keep(f)
		}
		if w[0].Dtype() == tensor.Float32 {
			return G.NewF32(float32(f.value())), nil
		}
		return G.NewF64(f.value()), nil
	}
	var f boundFactors[T]
	if kept, ok := op.st.take(&op.read).(boundFactors[T]); ok { // the bound's inputs are this op's: read them from here
		f = kept.at(wq, wv, wo)
	}
	if f == nil {
		var err error
		if f, err = factors(); err != nil {
			return nil, err
		}
	}
	out := op.out.get(nil, w[0].Dtype(), w[0].Shape(), in)
	f.grad(data[T](out), op.part, g)
	return out, nil
}

// boundFactors is a bound evaluated at weights of element type T, with its subgradient.
type boundFactors[T kernel.Float] interface {
	value() float64
	// grad writes g times the subgradient with respect to wq (0), wv (1) or wo (2) into out.
	grad(out []T, part int, g float64)
	// at is the factors reading the weights (of the same values) from wq, wv and wo.
	at(wq, wv, wo []T) boundFactors[T]
}

// DiffWRT is true for the three weights.
func (op *l2BoundOp) DiffWRT(int) []bool { return []bool{true, true, true} }

// SymDiff applies the three gradient ops to the inputs, the bound and its gradient.
func (op *l2BoundOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	ds := make(G.Nodes, 3)
	for i := range ds {
		var err error
		if ds[i], err = G.ApplyOp(op.gradOp(i), in[0], in[1], in[2], out, grad); err != nil {
			return nil, err
		}
	}
	return ds, nil
}

// l2KimBound holds the factors of Kim et al.'s bound and where their maxima are attained,
// for weights of element type T; every factor is accumulated in float64.
type l2KimBound[T kernel.Float] struct {
	wq, wv, wo []T     // (D, D) each
	d, hd      int     // D and the head width
	k          float64 // 4 phiInv + 1/sqrt(d)
	o, q, v    float64 // ||W^O^T||_inf, max_h r_h s_h, max_h ||W^{V,h}^T||_inf
	oCol       int     // column of W^O attaining o
	qRow, qCol int     // row attaining r_h* and column attaining s_h*
	qHead      int     // head h* attaining q
	r, s       float64 // ||W^{Q,h*}||_inf and ||W^{Q,h*}^T||_inf
	vCol       int     // column of W^V attaining v
	bound      float64
}

// value is the bound.
func (b l2KimBound[T]) value() float64 { return b.bound }

// at is b reading wq, wv and wo.
func (b l2KimBound[T]) at(wq, wv, wo []T) boundFactors[T] {
	b.wq, b.wv, b.wo = wq, wv, wo
	return b
}

// l2BoundFactors evaluates Kim et al.'s bound for (D, D) weights.
func l2BoundFactors[T kernel.Float](wq, wv, wo []T, d, heads int, phiInv float64) l2KimBound[T] {
	b := l2KimBound[T]{wq: wq, wv: wv, wo: wo, d: d, hd: d / heads}
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

// grad writes g times the subgradient of the bound with respect to wq (0), wv (1) or wo (2)
// into out (D, D), every element computed in float64 and rounded once.
func (b l2KimBound[T]) grad(out []T, part int, g float64) {
	clear(out)
	switch part {
	case 0: // d(r s) = s dr + r ds, each element a sum from +0 (a zero term gives +0, not -0)
		c := g * b.k * b.o * b.v
		row := func(j int) float64 { return c * b.s * sign(b.wq[b.qRow*b.d+j]) }
		col := func(i int) float64 { return c * b.r * sign(b.wq[i*b.d+b.qCol]) }
		for j := b.qHead * b.hd; j < (b.qHead+1)*b.hd; j++ {
			out[b.qRow*b.d+j] = T(0 + row(j))
		}
		for i := 0; i < b.d; i++ {
			x := 0 + col(i)
			if i == b.qRow { // qCol lies in head qHead: (qRow, qCol) gets both terms
				x = 0 + row(b.qCol) + col(i)
			}
			out[i*b.d+b.qCol] = T(x)
		}
	case 1:
		c := g * b.k * b.o * b.q
		for i := 0; i < b.d; i++ {
			out[i*b.d+b.vCol] = T(c * sign(b.wv[i*b.d+b.vCol]))
		}
	case 2:
		c := g * b.k * b.q * b.v
		for i := 0; i < b.d; i++ {
			out[i*b.d+b.oCol] = T(c * sign(b.wo[i*b.d+b.oCol]))
		}
	}
}

// sign is the sign of x as -1, 0 or 1.
func sign[T kernel.Float](x T) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// maxColSum is the largest absolute column sum of columns lo..hi of a (d, d) matrix, and
// its column.
func maxColSum[T kernel.Float](w []T, d, lo, hi int) (float64, int) {
	best, col := -1.0, lo
	for j := lo; j < hi; j++ {
		var s float64
		for i := 0; i < d; i++ {
			s += math.Abs(float64(w[i*d+j]))
		}
		if s > best {
			best, col = s, j
		}
	}
	return best, col
}

// maxRowSum is the largest absolute row sum over columns lo..hi of a (d, d) matrix, and its
// row.
func maxRowSum[T kernel.Float](w []T, d, lo, hi int) (float64, int) {
	best, row := -1.0, 0
	for i := 0; i < d; i++ {
		var s float64
		for j := lo; j < hi; j++ {
			s += math.Abs(float64(w[i*d+j]))
		}
		if s > best {
			best, row = s, i
		}
	}
	return best, row
}

// addHeadGram adds (W^{Q,h})^T W^{V,h} into m (hd, hd), head h being the columns lo..lo+hd
// of the (D, D) weights wq and wv, one row of the weights at a time: row r of m gains q_r v
// by gonum's axpy, which rounds each product and sum once as a scalar loop does. v64 (hd)
// is work space.
func addHeadGram[T kernel.Float](m, v64 []float64, wq, wv []T, d, lo, hd int) {
	for i := range d {
		for t, x := range wv[i*d+lo : i*d+lo+hd] {
			v64[t] = float64(x)
		}
		for r, q := range wq[i*d+lo : i*d+lo+hd] {
			gonum.Implementation{}.Daxpy(hd, float64(q), v64, 1, m[r*hd:(r+1)*hd], 1)
		}
	}
}
