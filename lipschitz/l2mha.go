package lipschitz

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// L2MHABoundInf returns the inf-norm Lipschitz upper bound of tied L2
// multihead attention on sequences of n tokens (docs/math.md; Kim et al.
// 2021, Thm 3.2):
//
//	(4 phi^{-1}(n-1) + 1/sqrt(d)) * ||W^O^T||_inf
//	  * max_h( ||W^{Q,h}||_inf ||W^{Q,h}^T||_inf ) * max_h ||W^{V,h}^T||_inf
//
// with phi^{-1}(n-1) = PhiInv(n) = W_0((n-1)/e). wq and wv hold the H per-head
// matrices, each (D, d) with d = D/H; wo is (D, D). It returns an error naming
// the offending argument if n < 1, a shape is wrong or an entry not finite.
func L2MHABoundInf(n int, wq, wv []*mat.Dense, wo *mat.Dense) (float64, error) {
	d, err := checkL2MHA(n, wq, wv, wo)
	if err != nil {
		return 0, err
	}
	query, value := 0.0, 0.0
	for h := range wq {
		query = math.Max(query, NormInf(wq[h])*NormInf(wq[h].T()))
		value = math.Max(value, NormInf(wv[h].T()))
	}
	return (4*PhiInv(n) + 1/math.Sqrt(float64(d))) * NormInf(wo.T()) * query * value, nil
}

// L2MHABound2AsStated evaluates the 2-norm "bound" of tied L2 multihead attention
// exactly as docs/math.md, "Bounds of tied L2 attention" states it (our reading of Kim et al. 2021, Thm 3.2):
//
//	sqrt(n/d) * (4 phi^{-1}(n-1) + 1)
//	  * sqrt( sum_h ||W^{Q,h}||_2^2 ||W^{V,h}||_2^2 ) * ||W^O||_2
//
// with phi^{-1}(n-1) = PhiInv(n) and spectral norms computed exactly. The
// arguments are as for L2MHABoundInf.
//
// Warning: this formula is NOT a valid bound in general. It is linear in the
// scale of W^Q, while the Lipschitz constant of L2-MHA is exactly quadratic in
// it (with W^Q scaled by a, F(X) = a F_1(a X) where F_1 has the original
// weights), so it fails for large query weights. Counterexample: D = H = 1,
// N = 2, W^Q = 4, W^V = W^O = 1, X = 0 has ||J||_2 = 16 > 11.96. Use L2MHABound2;
// this function is kept to document the finding (TestL2MHABound2SPECFailsForLargeQueries).
func L2MHABound2AsStated(n int, wq, wv []*mat.Dense, wo *mat.Dense) (float64, error) {
	return bound2(n, wq, wv, wo, 1)
}

// L2MHABound2 returns the 2-norm Lipschitz upper bound of tied L2 multihead
// attention on sequences of n tokens: docs/math.md's formula with each
// ||W^{Q,h}||_2 squared, the form that scales correctly with W^Q:
//
//	sqrt(n/d) * (4 phi^{-1}(n-1) + 1)
//	  * sqrt( sum_h ||W^{Q,h}||_2^4 ||W^{V,h}||_2^2 ) * ||W^O||_2
//
// It follows from writing head h as g(X W^{Q,h}) (W^{Q,h})^T W^{V,h} / sqrt(d),
// with g(Y) = P(Y) Y the L2 attention of identity weights, and is tight for
// n = 1, D = H = 1. It corrects docs/math.md, "Bounds of tied L2 attention" (see L2MHABound2AsStated); the
// correction is checked numerically, not proved here. The arguments are as for
// L2MHABoundInf.
func L2MHABound2(n int, wq, wv []*mat.Dense, wo *mat.Dense) (float64, error) {
	return bound2(n, wq, wv, wo, 2)
}

// errNaNBound reports a bound made NaN by a failed singular value decomposition.
var errNaNBound = errors.New("lipschitz: 2-norm bound is NaN (an SVD failed)")

// bound2 computes the 2-norm bounds with ||W^{Q,h}||_2 raised to qPower.
func bound2(n int, wq, wv []*mat.Dense, wo *mat.Dense, qPower int) (float64, error) {
	d, err := checkL2MHA(n, wq, wv, wo)
	if err != nil {
		return 0, err
	}
	sum := 0.0
	for h := range wq {
		q := math.Pow(Norm2(wq[h]), float64(qPower))
		v := Norm2(wv[h])
		sum += q * q * v * v
	}
	bound := math.Sqrt(float64(n)/float64(d)) * (4*PhiInv(n) + 1) * math.Sqrt(sum) * Norm2(wo)
	if math.IsNaN(bound) {
		return 0, errNaNBound
	}
	return bound, nil
}

// checkL2MHA validates the arguments of the L2 attention bounds: n >= 1,
// H = len(wq) = len(wv) >= 1 heads, each (D, d) with D = H d, and wo (D, D).
// Every entry must be finite. It returns the head width d.
func checkL2MHA(n int, wq, wv []*mat.Dense, wo *mat.Dense) (int, error) {
	if n < 1 {
		return 0, fmt.Errorf("lipschitz: sequence length n = %d, want >= 1", n)
	}
	heads := len(wq)
	if heads == 0 {
		return 0, errors.New("lipschitz: wq has no heads")
	}
	if len(wv) != heads {
		return 0, fmt.Errorf("lipschitz: wv has %d heads, wq has %d", len(wv), heads)
	}
	if wq[0] == nil {
		return 0, errors.New("lipschitz: wq[0] is nil")
	}
	dim, d := wq[0].Dims()
	if dim != heads*d {
		return 0, fmt.Errorf("lipschitz: wq[0] is %dx%d, want D x d with D = H d = %d rows for H = %d heads", dim, d, heads*d, heads)
	}
	for h := range heads {
		if err := checkShape(fmt.Sprintf("wq[%d]", h), wq[h], dim, d); err != nil {
			return 0, err
		}
		if err := checkShape(fmt.Sprintf("wv[%d]", h), wv[h], dim, d); err != nil {
			return 0, err
		}
	}
	if err := checkShape("wo", wo, dim, dim); err != nil {
		return 0, err
	}
	return d, nil
}

// checkShape returns an error naming arg unless w is a non-nil (rows, cols)
// matrix of finite entries.
func checkShape(arg string, w *mat.Dense, rows, cols int) error {
	if w == nil {
		return fmt.Errorf("lipschitz: %s is nil, want %dx%d", arg, rows, cols)
	}
	if r, c := w.Dims(); r != rows || c != cols {
		return fmt.Errorf("lipschitz: %s is %dx%d, want %dx%d", arg, r, c, rows, cols)
	}
	for i := range rows {
		for j := range cols {
			if v := w.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("lipschitz: %s[%d][%d] = %v, want finite", arg, i, j, v)
			}
		}
	}
	return nil
}
