package lipschitz

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// NormInf returns ||M||_inf, the largest absolute row sum of m. Applied to a
// transpose it gives the largest absolute column sum: ||W^T||_inf is
// NormInf(W.T()). An empty matrix has norm 0; a nil one gives NaN.
func NormInf(m mat.Matrix) float64 {
	if isNil(m) {
		return math.NaN()
	}
	r, c := m.Dims()
	largest := 0.0
	for i := range r {
		sum := 0.0
		for j := range c {
			sum += math.Abs(m.At(i, j))
		}
		largest = math.Max(largest, sum)
	}
	return largest
}

// Norm2 returns ||M||_2, the spectral norm of m (its largest singular value),
// computed exactly by a singular value decomposition. An empty matrix has
// norm 0; a nil one, or a failed decomposition, gives NaN.
//
// Note that gonum's mat.Norm(m, 2) is the Frobenius norm, not this one.
func Norm2(m mat.Matrix) float64 {
	if isNil(m) {
		return math.NaN()
	}
	r, c := m.Dims()
	if r == 0 || c == 0 {
		return 0
	}
	var svd mat.SVD
	if !svd.Factorize(m, mat.SVDNone) {
		return math.NaN()
	}
	return svd.Values(nil)[0]
}

// LinearLipInf returns the exact inf-norm Lipschitz constant of the linear
// map x -> x W applied to every row of a sequence: ||W^T||_inf, the largest
// absolute column sum of w. (Its 2-norm constant is Norm2(w).) A nil w
// gives NaN.
func LinearLipInf(w mat.Matrix) float64 {
	if isNil(w) {
		return math.NaN()
	}
	return NormInf(w.T())
}

// isNil reports whether m is a nil interface or a nil *mat.Dense, on which
// Dims would panic.
func isNil(m mat.Matrix) bool {
	if m == nil {
		return true
	}
	d, ok := m.(*mat.Dense)
	return ok && d == nil
}
