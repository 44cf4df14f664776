package kernel

import "math"

// LayerNormRows writes y = gamma * (x - mean) / sqrt(var + eps) + beta for every row of x
// (width len(gamma)), with the row's mean and biased variance (as PyTorch) summed in
// float64, in parallel over rows. y may be x.
func LayerNormRows[T Float](y, x, gamma, beta []T, eps float64) {
	d := len(gamma)
	ParallelFor(len(x)/d, d, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			xr, yr := x[r*d:(r+1)*d], y[r*d:(r+1)*d]
			mean, rstd := rowStats(xr, eps)
			for j, v := range xr {
				yr[j] = T((float64(v)-mean)*rstd)*gamma[j] + beta[j]
			}
		}
	})
}

// LayerNormGrad writes the gradient of LayerNormRows' input x into dx, from the output
// gradient dy: with xhat the normalised row and g = dy * gamma, dx = rstd * (g - mean(g) -
// xhat * mean(g * xhat)) row by row, the statistics recomputed, in parallel over rows.
func LayerNormGrad[T Float](dx, x, gamma, dy []T, eps float64) {
	d := len(gamma)
	ParallelFor(len(x)/d, d, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			xr, dyr := x[r*d:(r+1)*d], dy[r*d:(r+1)*d]
			mean, rstd := rowStats(xr, eps)
			var mg, mgx float64
			for j, v := range xr {
				g := float64(dyr[j]) * float64(gamma[j])
				mg += g
				mgx += g * (float64(v) - mean) * rstd
			}
			mg /= float64(d)
			mgx /= float64(d)
			dxr := dx[r*d : (r+1)*d]
			for j, v := range xr {
				g := float64(dyr[j]) * float64(gamma[j])
				dxr[j] = T(rstd * (g - mg - (float64(v)-mean)*rstd*mgx))
			}
		}
	})
}

// LayerNormGainGrad writes the gradient of LayerNormRows' gain into dgamma (width d =
// len(dgamma)): the column sums of dy * xhat, with partial sums per fixed block of rows in
// ws, in parallel over blocks.
func LayerNormGainGrad[T Float](dgamma, x, dy []T, eps float64, ws *Workspace) {
	d := len(dgamma)
	n := len(x) / d
	colSums(dgamma, n, Scratch[T](ws, 1, colSumsLen(n, d))[0], func(acc []T, r int) {
		xr, dyr := x[r*d:(r+1)*d], dy[r*d:(r+1)*d]
		mean, rstd := rowStats(xr, eps)
		for j, v := range xr {
			acc[j] += T(float64(dyr[j]) * (float64(v) - mean) * rstd)
		}
	})
}

// rowStats returns the mean and 1/sqrt(var + eps) of a row, summed in float64 (for
// float32 rows by the vector kernels where the processor has them, rowsums_amd64.s).
func rowStats[T Float](row []T, eps float64) (mean, rstd float64) {
	var done int
	if r32, ok := any(row).([]float32); ok {
		mean, done = sumVec(r32)
	}
	for _, v := range row[done:] {
		mean += float64(v)
	}
	mean /= float64(len(row))
	var variance float64
	if r32, ok := any(row).([]float32); ok {
		variance, done = sqDevVec(r32, mean)
	}
	for _, v := range row[done:] {
		c := float64(v) - mean
		variance += c * c
	}
	variance /= float64(len(row))
	return mean, 1 / math.Sqrt(variance+eps)
}
