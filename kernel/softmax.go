package kernel

import "math"

// SoftmaxRows writes the softmax of every length-n row of x into y (as SoftmaxRow), in
// parallel over rows. With causal, row r of each (n, n) block keeps columns 0..r%n and the
// rest of its row is zero. y may be x.
func SoftmaxRows[T Float](y, x []T, n int, causal bool) {
	ParallelFor(len(x)/n, n, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			keep := n
			if causal {
				keep = r%n + 1
			}
			SoftmaxRow(y[r*n:(r+1)*n], x[r*n:(r+1)*n], keep)
		}
	})
}

// SoftmaxRow writes the softmax of x[:keep] into y[:keep], max-shifted so that rows far
// from 0 stay finite, and zeros into y[keep:]; keep must be at least 1 and y may be x. The
// exponentials and their sum are computed in float64, or for float32 rows in float32
// within 1.5 ulps and summed in float64.
func SoftmaxRow[T Float](y, x []T, keep int) {
	var sum float64
	if y32, ok := any(y).([]float32); ok {
		x32, y32 := any(x).([]float32)[:keep], y32[:keep]
		m, done := maxVec(x32)
		if done == 0 {
			m = x32[0]
		}
		for _, v := range x32[done:] {
			if v > m {
				m = v
			}
		}
		sum, done = expShiftSumVec(y32, x32, m)
		for j, v := range x32[done:] {
			y32[done+j] = v - m
		}
		expNeg32sGo(y32[done:], y32[done:])
		for _, e := range y32[done:] {
			sum += float64(e)
		}
	} else {
		m := x[0]
		for _, v := range x[1:keep] {
			if v > m {
				m = v
			}
		}
		for j, v := range x[:keep] {
			e := math.Exp(float64(v - m))
			y[j] = T(e)
			sum += e
		}
	}
	inv := T(1 / sum)
	for j := range y[:keep] {
		y[j] *= inv
	}
	clear(y[keep:])
}

// SoftmaxGradRows writes dx = y * (dy - <y, dy>) for every length-n row of a softmax's
// output y and its gradient dy: the gradient of the softmax's input, in parallel over rows.
func SoftmaxGradRows[T Float](dx, y, dy []T, n int) {
	ParallelFor(len(y)/n, n, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			yr, dyr, dxr := y[r*n:(r+1)*n], dy[r*n:(r+1)*n], dx[r*n:(r+1)*n]
			var dot float64
			for j, v := range yr {
				dot += float64(v) * float64(dyr[j])
			}
			for j, v := range yr {
				dxr[j] = v * (dyr[j] - T(dot))
			}
		}
	})
}
