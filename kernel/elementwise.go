package kernel

// Add writes y = a + b elementwise, in parallel chunks. y may be a or b.
func Add[T Float](y, a, b []T) {
	ParallelFor(len(a), 1, func(_, lo, hi int) {
		ar, br, yr := a[lo:hi], b[lo:hi], y[lo:hi]
		for i, v := range ar {
			yr[i] = v + br[i]
		}
	})
}

// Mul writes y = a * b elementwise, in parallel chunks. y may be a or b.
func Mul[T Float](y, a, b []T) {
	ParallelFor(len(a), 1, func(_, lo, hi int) {
		ar, br, yr := a[lo:hi], b[lo:hi], y[lo:hi]
		for i, v := range ar {
			yr[i] = v * br[i]
		}
	})
}

// AddBias writes y = x + b for every row of x (width len(b)), in parallel over rows. y may
// be x.
func AddBias[T Float](y, x, b []T) {
	d := len(b)
	ParallelFor(len(x)/d, d, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			yr, xr := y[r*d:(r+1)*d], x[r*d:(r+1)*d]
			for j, v := range xr {
				yr[j] = v + b[j]
			}
		}
	})
}

// FillRows writes b into every row of y (width len(b)), in parallel over rows: the start
// of a product with a bias, which then adds into y.
func FillRows[T Float](y, b []T) {
	d := len(b)
	ParallelFor(len(y)/d, d, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			copy(y[r*d:(r+1)*d], b)
		}
	})
}

// Scale writes y = s x elementwise, on the calling goroutine. y may be x.
func Scale[T Float](y, x []T, s T) {
	for i, v := range x {
		y[i] = s * v
	}
}
