package ref

import (
	"fmt"
	"math"
)

// LayerNorm normalises each row x_i of the (N, D) sequence x over its D
// features: gamma * (x_i - mean) / sqrt(var + eps) + beta, with the biased
// variance var = mean((x_i - mean)^2) as in PyTorch. gamma and beta have
// length D; eps must be >= 0.
func LayerNorm(x [][]float64, gamma, beta []float64, eps float64) ([][]float64, error) {
	n, d, err := dims("x", x)
	if err != nil {
		return nil, err
	}
	if len(gamma) != d {
		return nil, fmt.Errorf("ref: LayerNorm gamma has length %d, want D = %d", len(gamma), d)
	}
	if len(beta) != d {
		return nil, fmt.Errorf("ref: LayerNorm beta has length %d, want D = %d", len(beta), d)
	}
	if !(eps >= 0) || math.IsInf(eps, 1) {
		return nil, fmt.Errorf("ref: LayerNorm eps = %v, want finite and >= 0", eps)
	}
	out := zeros(n, d)
	for i := range n {
		c, sumSq := centred(x[i])
		scale := 1 / math.Sqrt(sumSq/float64(d)+eps)
		for k := range d {
			out[i][k] = gamma[k]*c[k]*scale + beta[k]
		}
	}
	return out, nil
}
