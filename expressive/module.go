package expressive

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Module is a single-head self-attention module with fixed parameters: for an input X of
// width n its attention matrix is softmax_rows(X W_Q W_K^T X^T). There is no 1/sqrt(d)
// scale (docs/math.md, "Expressive power of attention matrices"); it would only rescale the input.
type Module struct {
	WQ *mat.Dense // (n, d)
	WK *mat.Dense // (n, d)
}

// NewModule returns the module with query map wq and key map wk, both n x d.
func NewModule(wq, wk *mat.Dense) (*Module, error) {
	if wq == nil || wk == nil {
		return nil, fmt.Errorf("expressive: module needs both W_Q and W_K")
	}
	nq, dq := wq.Dims()
	nk, dk := wk.Dims()
	if nq != nk || dq != dk {
		return nil, fmt.Errorf("expressive: W_Q is %d x %d but W_K is %d x %d, want equal shapes", nq, dq, nk, dk)
	}
	return &Module{WQ: wq, WK: wk}, nil
}

// InputWidth is n, the width of the inputs the module accepts.
func (m *Module) InputWidth() int { n, _ := m.WQ.Dims(); return n }

// HeadWidth is d, the width of queries and keys.
func (m *Module) HeadWidth() int { _, d := m.WQ.Dims(); return d }

// Logits returns Z = (X W_Q)(X W_K)^T for an input x. // x: (L, n); Z: (L, L)
func (m *Module) Logits(x *mat.Dense) (*mat.Dense, error) {
	q, k, err := m.project(x)
	if err != nil {
		return nil, err
	}
	L, _ := x.Dims()
	z := mat.NewDense(L, L, nil)
	z.Mul(q, k.T())
	return z, nil
}

// Attention returns the attention matrix softmax_rows(Logits(x)), each row shifted by its
// maximum before exponentiation. // x: (L, n); result: (L, L)
func (m *Module) Attention(x *mat.Dense) (*mat.Dense, error) {
	z, err := m.Logits(x)
	if err != nil {
		return nil, err
	}
	softmaxRows(z)
	return z, nil
}

// project returns Q = X W_Q and K = X W_K. // Q, K: (L, d)
func (m *Module) project(x *mat.Dense) (q, k *mat.Dense, err error) {
	if x == nil {
		return nil, nil, fmt.Errorf("expressive: module input is nil")
	}
	L, n := x.Dims()
	if n != m.InputWidth() {
		return nil, nil, fmt.Errorf("expressive: input X is %d x %d, want width %d (rows of W_Q)", L, n, m.InputWidth())
	}
	d := m.HeadWidth()
	q, k = mat.NewDense(L, d, nil), mat.NewDense(L, d, nil)
	q.Mul(x, m.WQ)
	k.Mul(x, m.WK)
	return q, k, nil
}

// softmaxRows replaces every row of z by its max-shifted softmax, in place. // z: (L, L)
func softmaxRows(z *mat.Dense) {
	r, _ := z.Dims()
	for i := range r {
		row := z.RawRowView(i)
		top := math.Inf(-1)
		for _, v := range row {
			top = math.Max(top, v)
		}
		var sum float64
		for j, v := range row {
			row[j] = math.Exp(v - top)
			sum += row[j]
		}
		for j := range row {
			row[j] /= sum
		}
	}
}

// maxAbs returns the largest absolute entry of x.
func maxAbs(x *mat.Dense) float64 {
	var m float64
	r, _ := x.Dims()
	for i := range r {
		for _, v := range x.RawRowView(i) {
			m = math.Max(m, math.Abs(v))
		}
	}
	return m
}
