package train

import (
	"math"
	"runtime"

	"lipformer/kernel"
)

// GlobalNorm returns the Euclidean norm of all gradients taken together, as
// one vector, accumulated in float64. It is +Inf when an element is infinite
// or the norm overflows float64, and NaN when an element is NaN. It does not
// allocate.
func GlobalNorm[T Float](grads [][]T) float64 { return globalNorm(grads, nil) }

// globalNorm is GlobalNorm. With dots of len(grads) it takes the tensors' sums of squares
// on every core (kernel.ParallelJobs) into dots and adds them in order, the same sum bit
// for bit; with nil dots it takes them one after the other.
func globalNorm[T Float](grads [][]T, dots []float64) float64 {
	var sum float64
	if dots != nil {
		kernel.ParallelJobs(len(grads), runtime.GOMAXPROCS(0), func(_, j int) { dots[j] = kernel.Dot(grads[j], grads[j]) })
		for _, d := range dots {
			sum += d
		}
	} else {
		for _, g := range grads {
			sum += kernel.Dot(g, g)
		}
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
	return clipGlobalNorm(grads, maxNorm, nil)
}

// clipGlobalNorm is ClipGlobalNorm; with dots of len(grads) it runs on every core
// (globalNorm), the same values bit for bit, and allocates what kernel.ParallelJobs does.
func clipGlobalNorm[T Float](grads [][]T, maxNorm float64, dots []float64) float64 {
	norm := globalNorm(grads, dots)
	if !(maxNorm > 0) || !(norm > maxNorm) || math.IsInf(norm, 1) {
		return norm
	}
	scale := T(maxNorm / norm)
	if dots == nil {
		for _, g := range grads {
			kernel.Scale(g, g, scale)
		}
		return norm
	}
	kernel.ParallelJobs(len(grads), runtime.GOMAXPROCS(0), func(_, j int) { kernel.Scale(grads[j], grads[j], scale) })
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
