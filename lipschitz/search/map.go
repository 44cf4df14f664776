package search

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Map is a function F: R^K -> R^K of vec(X), here an attention layer on
// sequences of N tokens of width D (K = N D), with the exact first-order
// derivatives the search needs. A Map is not safe for concurrent use: give
// each goroutine its own.
type Map interface {
	// Len is K = N D, the length of vec(X) and of vec(F(X)).
	Len() int
	// Forward writes F(xs[b]) into dst[b] for every b.
	Forward(xs, dst [][]float64) error
	// VJP writes us[b]^T J(xs[b]), the gradient of us[b] . F at xs[b], into
	// dst[b] for every b.
	VJP(xs, us, dst [][]float64) error
	// Jacobian writes the exact (K, K) Jacobian J(x), J_ik = dF_i/dx_k, into
	// dst.
	Jacobian(x []float64, dst *mat.Dense) error
}

// JacobianOf returns the exact Jacobian of m at x in a new (K, K) matrix.
func JacobianOf(m Map, x []float64) (*mat.Dense, error) {
	k := m.Len()
	if err := checkVec("x", x, k); err != nil {
		return nil, err
	}
	j := mat.NewDense(k, k, nil)
	return j, m.Jacobian(x, j)
}

// checkVec returns an error naming arg unless v has length k and finite
// entries.
func checkVec(arg string, v []float64, k int) error {
	if len(v) != k {
		return fmt.Errorf("search: %s has length %d, want %d (N*D)", arg, len(v), k)
	}
	for i, e := range v {
		if math.IsNaN(e) || math.IsInf(e, 0) {
			return fmt.Errorf("search: %s[%d] = %v, want finite", arg, i, e)
		}
	}
	return nil
}

// checkBatch validates the arguments of Forward (weighted false, us unused)
// and VJP: xs, us and dst of equal, non-zero count, every vector of length k.
// The inputs and weights must be finite.
func checkBatch(xs, us, dst [][]float64, k int, weighted bool) error {
	if len(xs) == 0 {
		return fmt.Errorf("search: no input sequence")
	}
	if weighted && len(us) != len(xs) {
		return fmt.Errorf("search: %d weight vectors for %d inputs", len(us), len(xs))
	}
	if len(dst) != len(xs) {
		return fmt.Errorf("search: %d outputs for %d inputs", len(dst), len(xs))
	}
	for b := range xs {
		if err := checkVec(fmt.Sprintf("input %d", b), xs[b], k); err != nil {
			return err
		}
		if weighted {
			if err := checkVec(fmt.Sprintf("weights %d", b), us[b], k); err != nil {
				return err
			}
		}
		if len(dst[b]) != k {
			return fmt.Errorf("search: output %d has length %d, want %d", b, len(dst[b]), k)
		}
	}
	return nil
}

// checkJacobianDst returns an error unless dst is a non-nil (k, k) matrix.
func checkJacobianDst(dst *mat.Dense, k int) error {
	if dst == nil {
		return fmt.Errorf("search: nil Jacobian destination")
	}
	if r, c := dst.Dims(); r != k || c != k {
		return fmt.Errorf("search: Jacobian destination is %dx%d, want %dx%d", r, c, k, k)
	}
	return nil
}
