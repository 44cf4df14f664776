package kernel

// The causal mix of docs/math.md, "The mixing sub-block": y_t = sum over delta = 0..min(k-1, t)
// of a_delta x_{t-delta}, for the rows of sequences of t rows of width d stored one after
// the other. Row t's inputs x_{t-k+1..t} are contiguous, so each output row is one
// WeightedRowSum with the taps reversed.

// CausalMixRows writes y = mix(x) for x and y (n t, d) and taps a (k); y must not overlap x.
func CausalMixRows[T Float](y, x, a []T, t, d int) {
	k := len(a)
	rev := make([]T, k) // rev[j] = a[k-1-j]: the weight of the j-th row of a full window
	for j, v := range a {
		rev[k-1-j] = v
	}
	n := len(x) / d
	ParallelFor(n, k*d, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			m := min(k, r%t+1) // rows r-m+1..r
			WeightedRowSum(y[r*d:(r+1)*d], rev[k-m:], x[(r-m+1)*d:])
		}
	})
}

// CausalMixGradInput writes dx = mix^T(dy) for dx and dy (n t, d): dx_s = sum over delta of
// a_delta dy_{s+delta}, for s + delta in the sequence; dx must not overlap dy.
func CausalMixGradInput[T Float](dx, dy, a []T, t, d int) {
	k := len(a)
	n := len(dy) / d
	ParallelFor(n, k*d, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			m := min(k, t-r%t) // rows r..r+m-1
			WeightedRowSum(dx[r*d:(r+1)*d], a[:m], dy[r*d:])
		}
	})
}

// CausalMixGradTaps returns da_delta = sum over rows of dy_t . x_{t-delta} (k values), for x
// and dy (n t, d), in float64. Each sequence's sums are kept apart and added in sequence
// order, so the result does not depend on GOMAXPROCS.
func CausalMixGradTaps[T Float](x, dy []T, k, t, d int) []float64 {
	seqs := len(x) / (t * d)
	per := make([]float64, seqs*k)
	ParallelFor(seqs, t*k*d, func(_, lo, hi int) {
		s := make([]T, k)
		for q := lo; q < hi; q++ {
			acc := per[q*k : (q+1)*k]
			for i := range t {
				r := q*t + i
				m := min(k, i+1) // s[j] = dy_r . x_{r-m+1+j}
				DotRows(s[:m], x[(r-m+1)*d:], dy[r*d:(r+1)*d], 1)
				for j, v := range s[:m] {
					acc[m-1-j] += float64(v)
				}
			}
		}
	})
	da := make([]float64, k)
	for q := range seqs {
		for j := range da {
			da[j] += per[q*k+j]
		}
	}
	return da
}
