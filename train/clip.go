package train

import "math"

// GlobalNorm returns the Euclidean norm of all gradients taken together, as
// one vector, accumulated in float64. It is +Inf when an element is infinite
// or the norm overflows float64, and NaN when an element is NaN. It does not
// allocate.
func GlobalNorm[T Float](grads [][]T) float64 {
	var sum float64
	for _, g := range grads {
		sum += sumSquares(g)
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

// sumSquares returns the sum of the squares of g in float64, with four
// accumulators to keep the floating-point pipeline busy.
func sumSquares[T Float](g []T) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(g); i += 4 {
		x := g[i : i+4 : i+4]
		a, b, c, d := float64(x[0]), float64(x[1]), float64(x[2]), float64(x[3])
		s0 += a * a
		s1 += b * b
		s2 += c * c
		s3 += d * d
	}
	for ; i < len(g); i++ {
		a := float64(g[i])
		s0 += a * a
	}
	return (s0 + s1) + (s2 + s3)
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
