package ref

import (
	"fmt"
	"math"
)

// Softmax applies a softmax to each row of rows, shifting by the row maximum
// for numerical stability. It returns a new matrix of the same shape.
//
// With causal set, rows must be square (N, N) and row i keeps only the
// entries j <= i (always including j = i); the others are exactly 0.
func Softmax(rows [][]float64, causal bool) ([][]float64, error) {
	n, m, err := dims("rows", rows)
	if err != nil {
		return nil, err
	}
	if causal && n != m {
		return nil, fmt.Errorf("ref: causal Softmax needs square rows, got %dx%d", n, m)
	}
	out := zeros(n, m)
	for i := range n {
		last := m - 1
		if causal {
			last = i
		}
		maxLogit := math.Inf(-1)
		for j := 0; j <= last; j++ {
			maxLogit = math.Max(maxLogit, rows[i][j])
		}
		sum := 0.0
		for j := 0; j <= last; j++ {
			out[i][j] = math.Exp(rows[i][j] - maxLogit)
			sum += out[i][j]
		}
		for j := 0; j <= last; j++ {
			out[i][j] /= sum
		}
	}
	return out, nil
}
