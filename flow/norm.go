package flow

import (
	"fmt"
	"math"
)

// Norm is the norm of a batch of sequences (B*T rows of width D, row-major) in which a
// sub-block contracts and is inverted.
type Norm int

const (
	// SeqInf is max_ij |X_ij|: the inf-norm of vec(X), maximised over the batch.
	SeqInf Norm = iota
	// Token2 is the largest 2-norm of a token (row) of the batch.
	Token2
)

// String names the norm.
func (n Norm) String() string {
	switch n {
	case SeqInf:
		return "inf"
	case Token2:
		return "token-2"
	}
	return fmt.Sprintf("Norm(%d)", int(n))
}

// Dist is the norm of a - b, two batches of rows of the given width.
func (n Norm) Dist(a, b []float64, width int) float64 {
	var worst float64
	if n == SeqInf {
		for i := range a {
			worst = math.Max(worst, math.Abs(a[i]-b[i]))
		}
		return worst
	}
	for r := 0; r < len(a); r += width {
		var s float64
		for k := r; k < r+width; k++ {
			s += (a[k] - b[k]) * (a[k] - b[k])
		}
		worst = math.Max(worst, s)
	}
	return math.Sqrt(worst)
}

// Of is the norm of a.
func (n Norm) Of(a []float64, width int) float64 { return n.Dist(a, make([]float64, len(a)), width) }
