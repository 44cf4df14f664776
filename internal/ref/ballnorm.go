package ref

import (
	"fmt"
	"math"
)

// BallNorm centres each row x_i of the (N, D) sequence x and projects it onto the ball of
// radius r: u_i min(1, r/||u_i||_2) with u_i = x_i - mean(x_i). r must be finite and > 0.
func BallNorm(x [][]float64, r float64) ([][]float64, error) {
	n, d, err := dims("x", x)
	if err != nil {
		return nil, err
	}
	if !(r > 0) || math.IsInf(r, 1) {
		return nil, fmt.Errorf("ref: BallNorm radius = %v, want finite and > 0", r)
	}
	out := zeros(n, d)
	for i := range n {
		mean := 0.0
		for k := range d {
			mean += x[i][k]
		}
		mean /= float64(d)
		norm := 0.0
		for k := range d {
			norm += (x[i][k] - mean) * (x[i][k] - mean)
		}
		norm = math.Sqrt(norm)
		scale := 1.0
		if norm > r {
			scale = r / norm
		}
		for k := range d {
			out[i][k] = (x[i][k] - mean) * scale
		}
	}
	return out, nil
}
