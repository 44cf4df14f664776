package train

import (
	"math"

	"lipformer/kernel"
)

// GlobalNorm returns the Euclidean norm of all gradients taken together, as
// one vector, accumulated in float64. It is +Inf when an element is infinite
// or the norm overflows float64, and NaN when an element is NaN. It does not
// allocate.
func GlobalNorm[T Float](grads [][]T) float64 {
	var sum float64
	for _, g := range grads {
		sum += kernel.Dot(g, g)
	}
	if math.IsInf(sum, 1) {
		return scaledNorm(grads)
	}
	return math.Sqrt(sum)
}

// ClipGlobalNorm scales all gradients in place by maxNorm/norm when their
// global norm exceeds maxNorm, so that the clipped norm is maxNorm, and
// returns the norm before clipping. maxNorm <= 0 (or NaN) disables clipping.
// A non-finite norm is returned with the gradients untouched: scaling them
// would only turn them into zeros and NaNs, and the caller should stop or
// skip the step instead. It does not allocate.
func ClipGlobalNorm[T Float](grads [][]T, maxNorm float64) float64 {
	norm := GlobalNorm(grads)
	if !(maxNorm > 0) || !(norm > maxNorm) || math.IsInf(norm, 1) {
		return norm
	}
	scale := T(maxNorm / norm)
	for _, g := range grads {
		for i := range g {
			g[i] *= scale
		}
	}
	return norm
}

// scaledNorm computes the global norm of gradients whose plain sum of squares
// overflowed, dividing by the largest magnitude first (as BLAS nrm2 does).
func scaledNorm[T Float](grads [][]T) float64 {
	var largest float64
	for _, g := range grads {
		for _, x := range g {
			largest = max(largest, math.Abs(float64(x)))
		}
	}
	if math.IsInf(largest, 1) {
		return largest
	}
	var sum float64
	for _, g := range grads {
		for _, x := range g {
			r := float64(x) / largest
			sum += r * r
		}
	}
	return largest * math.Sqrt(sum)
}
