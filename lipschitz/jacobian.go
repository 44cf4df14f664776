package lipschitz

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Jacobian returns the (M, K) Jacobian of f: R^K -> R^M at x by central
// differences with step h: column k is (f(x + h e_k) - f(x - h e_k)) / (2h),
// with 2h taken as the float64 distance between the two probes.
// The error is O(h^2) plus rounding of order eps/h; h around 1e-5 suits
// smooth float64 maps of O(1) scale. x is not modified.
//
// For a map of sequences, pass f on vec(X) (row-major, index i*D+k) so that
// the result is docs/math.md's (ND, ND) Jacobian. It returns an error if x is empty,
// h is not a finite positive number, f returns nothing or a length that
// changes between calls.
func Jacobian(f func(x []float64) []float64, x []float64, h float64) (*mat.Dense, error) {
	if len(x) == 0 {
		return nil, errors.New("lipschitz: Jacobian at an empty x")
	}
	if !(h > 0) || math.IsInf(h, 1) {
		return nil, fmt.Errorf("lipschitz: Jacobian step h = %v, want finite and > 0", h)
	}
	m := len(f(x))
	if m == 0 {
		return nil, errors.New("lipschitz: Jacobian of an f with empty output")
	}
	j := mat.NewDense(m, len(x), nil) // (M, K)
	probe := append([]float64(nil), x...)
	for k := range x {
		probe[k] = x[k] + h
		plus := f(probe)
		step := probe[k]
		probe[k] = x[k] - h
		minus := f(probe)
		step -= probe[k] // 2h as represented in float64
		probe[k] = x[k]
		if len(plus) != m || len(minus) != m {
			return nil, fmt.Errorf("lipschitz: Jacobian f returned %d and %d values at coordinate %d, want %d", len(plus), len(minus), k, m)
		}
		for i := range m {
			j.Set(i, k, (plus[i]-minus[i])/step)
		}
	}
	return j, nil
}

// JacobianNormInf returns ||J||_inf, the largest absolute row sum of j: the
// local inf-norm Lipschitz constant.
func JacobianNormInf(j mat.Matrix) float64 {
	return NormInf(j)
}

// JacobianNorm2 returns ||J||_2, the largest singular value of j: the local
// 2-norm Lipschitz constant.
func JacobianNorm2(j mat.Matrix) float64 {
	return Norm2(j)
}
