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
		c, sumSq := centred(x[i])
		scale := 1.0
		if norm := math.Sqrt(sumSq); norm > r {
			scale = r / norm
		}
		for k := range d {
			out[i][k] = c[k] * scale
		}
	}
	return out, nil
}
