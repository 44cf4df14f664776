package kernel

import "math"

// BallNormRows writes, for every row x of width d, y = u min(1, r/||u||_2) with u = x -
// mean(x): the row centred, then projected onto the ball of radius r (docs/math.md, "The
// ball norm"). Sums are taken in float64; rows run in parallel. y may be x.
func BallNormRows[T Float](y, x []T, d int, r float64) {
	ParallelFor(len(x)/d, d, func(_, lo, hi int) {
		for row := lo; row < hi; row++ {
			xr, yr := x[row*d:(row+1)*d], y[row*d:(row+1)*d]
			mean, norm := centredNorm(xr)
			s := 1.0
			if norm > r {
				s = r / norm
			}
			for j, v := range xr {
				yr[j] = T((float64(v) - mean) * s)
			}
		}
	})
}

// BallNormGrad writes into dx the gradient of BallNormRows' input from the output gradient
// dy. For a row inside the ball (||u|| <= r) it is dy centred; outside, with s = r/||u||
// and uhat = u/||u||, it is s (dy - uhat (uhat . dy)) centred, and since uhat sums to 0
// the centring subtracts mean(dy). dx may be dy.
func BallNormGrad[T Float](dx, x, dy []T, d int, r float64) {
	ParallelFor(len(x)/d, 2*d, func(_, lo, hi int) {
		for row := lo; row < hi; row++ {
			xr, dyr, dxr := x[row*d:(row+1)*d], dy[row*d:(row+1)*d], dx[row*d:(row+1)*d]
			mean, norm := centredNorm(xr)
			var dmean float64
			for _, g := range dyr {
				dmean += float64(g)
			}
			dmean /= float64(d)
			if norm <= r {
				for j, g := range dyr {
					dxr[j] = T(float64(g) - dmean)
				}
				continue
			}
			var proj float64 // uhat . dy
			for j, v := range xr {
				proj += (float64(v) - mean) / norm * float64(dyr[j])
			}
			s := r / norm
			for j, v := range xr {
				dxr[j] = T(s * (float64(dyr[j]) - dmean - proj*(float64(v)-mean)/norm))
			}
		}
	})
}

// BallNormRadiusGrad is the gradient of BallNormRows' radius r from the output gradient
// dy: the sum, over the rows outside the ball, of uhat . dy.
func BallNormRadiusGrad[T Float](x, dy []T, d int, r float64) float64 {
	var sum float64
	for row := 0; row < len(x)/d; row++ {
		xr, dyr := x[row*d:(row+1)*d], dy[row*d:(row+1)*d]
		mean, norm := centredNorm(xr)
		if norm <= r {
			continue
		}
		for j, v := range xr {
			sum += (float64(v) - mean) / norm * float64(dyr[j])
		}
	}
	return sum
}

// centredNorm returns a row's mean and the 2-norm of the row minus its mean, in float64.
func centredNorm[T Float](row []T) (mean, norm float64) {
	for _, v := range row {
		mean += float64(v)
	}
	mean /= float64(len(row))
	for _, v := range row {
		c := float64(v) - mean
		norm += c * c
	}
	return mean, math.Sqrt(norm)
}
