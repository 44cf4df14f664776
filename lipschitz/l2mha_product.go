package lipschitz

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// L2MHABoundInfProduct returns the product-form inf-norm Lipschitz upper bound of tied L2
// multihead attention on sequences of n tokens (docs/math.md, "The product bound"):
//
//	(4 sqrt(d) phi^{-1}(n-1) + 1) * max_e sum_h ||W^{Q,h}^T||_inf * sum_r |N_h[r, e]|
//
// with N_h = (W^{Q,h})^T W^{V,h} W^{O,h} / sqrt(d) (d, D), W^{O,h} the rows h*d..(h+1)*d of
// W^O. It writes head h as u(X W^{Q,h}) N_h, with u(Y) = P(Y) Y the L2 attention of identity
// weights, whose inf-norm constant 4 sqrt(d) phi^{-1}(n-1) + 1 does not depend on the
// logits' temperature; so it also bounds a layer whose logits use the queries times any
// positive per-head factor. For one head it is at most L2MHABoundInf, and equal for D = 1.
// The arguments are as for L2MHABoundInf.
func L2MHABoundInfProduct(n int, wq, wv []*mat.Dense, wo *mat.Dense) (float64, error) {
	return L2MHABoundInfProductBiased(n, wq, wv, wo, nil)
}

// L2MHABoundInfProductBiased is L2MHABoundInfProduct for causal attention whose head h adds
// bias[h][i-j] to the logit of row i, column j <= i: head h's constant becomes
// 4 sqrt(d) phi^{-1}(S_h) + 1 inside the sum over heads, S_h = BiasMass(bias[h], n)
// (docs/math.md, "Position bias"). bias nil is no bias; otherwise it holds one row of at
// least n entries per head.
func L2MHABoundInfProductBiased(n int, wq, wv []*mat.Dense, wo *mat.Dense, bias [][]float64) (float64, error) {
	d, err := checkL2MHA(n, wq, wv, wo)
	if err != nil {
		return 0, err
	}
	if err := checkBias(bias, len(wq), n); err != nil {
		return 0, err
	}
	dim := wo.RawMatrix().Rows
	stacked := StackedN(wq, wv, wo)
	cols := make([]float64, dim) // sum_h k_h a_h sum_r |N_h[r, e]| per output column e
	for h := range wq {
		a := HeadConstInf(bias, h, n, d) * NormInf(wq[h].T())
		for e := range dim {
			s := 0.0
			for r := range d {
				s += math.Abs(stacked.At(h*d+r, e))
			}
			cols[e] += a * s
		}
	}
	largest := 0.0
	for _, s := range cols {
		largest = math.Max(largest, s)
	}
	return largest, nil
}

// StackedN returns N (D, D) of tied L2 attention with per-head query and value maps wq and
// wv (D, d each) and output map wo (D, D): row block h is N_h = (W^{Q,h})^T W^{V,h}
// W^{O,h} / sqrt(d), W^{O,h} the rows h*d..(h+1)*d of wo, so that head h's output is
// P Q_h N_h (docs/math.md, "The decomposition every bound uses").
func StackedN(wq, wv []*mat.Dense, wo *mat.Dense) *mat.Dense {
	dim := wo.RawMatrix().Rows
	d := dim / len(wq)
	n, m := mat.NewDense(dim, dim, nil), mat.NewDense(d, d, nil)
	for h := range wq {
		m.Mul(wq[h].T(), wv[h])
		m.Scale(1/math.Sqrt(float64(d)), m)
		n.Slice(h*d, (h+1)*d, 0, dim).(*mat.Dense).Mul(m, wo.Slice(h*d, (h+1)*d, 0, dim))
	}
	return n
}

// IdentityL2LipInf is the inf-norm Lipschitz upper bound 4 sqrt(d) phi^{-1}(n-1) + 1 of
// u(Y) = P(Y) Y on sequences of n tokens of width d, with P = softmax of the logits
// -||y_i - y_j||^2 / tau for any temperature tau > 0 (docs/math.md, "The product bound"):
// the token-norm lemma read in the inf-norm, where a change of inf-norm 1 moves a token by
// at most sqrt(d) in the 2-norm. It is Kim et al.'s Thm 3.2 for one head of identity
// weights, scaled by sqrt(d).
func IdentityL2LipInf(n, d int) float64 {
	return 4*math.Sqrt(float64(d))*PhiInv(n) + 1
}
