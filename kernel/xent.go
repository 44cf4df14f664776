package kernel

import (
	"fmt"
	"math"
)

// NLL returns the summed negative log-likelihood -log softmax(row r)[targets[r]] of the
// rows r of logits (width v) whose target is not negative, and their count, or an error
// naming a target at or beyond v. Rows are scored in parallel into rowLoss (one element
// per target) and summed in row order, so that the sum does not depend on the number of
// goroutines.
func NLL[T Float](logits []T, targets []int, v int, rowLoss []float64) (float64, int, error) {
	count := 0
	for r, t := range targets {
		if t >= v {
			return 0, 0, fmt.Errorf("cross-entropy: target %d of row %d is outside the vocabulary [0, %d)", t, r, v)
		}
		if t >= 0 {
			count++
		}
	}
	ParallelFor(len(targets), v, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			if t := targets[r]; t >= 0 {
				row := logits[r*v : (r+1)*v]
				rowLoss[r] = logSumExp(row) - float64(row[t])
			}
		}
	})
	var sum float64
	for r, t := range targets {
		if t >= 0 {
			sum += rowLoss[r]
		}
	}
	return sum, count, nil
}

// NLLGrad writes into d the gradient of g times NLL's sum divided by its count: g/count *
// (softmax(row) - onehot(t)) for the rows with a target t in [0, v), zeros for the others,
// in parallel over rows.
func NLLGrad[T Float](d, logits []T, targets []int, v int, g float64) {
	count := 0
	for _, t := range targets {
		if t >= 0 {
			count++
		}
	}
	scale := g / float64(count)
	ParallelFor(len(targets), v, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			t := targets[r]
			dr := d[r*v : (r+1)*v]
			if t < 0 || t >= v {
				clear(dr)
				continue
			}
			row := logits[r*v : (r+1)*v]
			SoftmaxRow(dr, row, v)
			for j := range dr {
				dr[j] *= T(scale)
			}
			dr[t] -= T(scale)
		}
	})
}

// logSumExp is log(sum(exp(row))), max-shifted; float32 rows use expNeg32 and a float32
// sum.
func logSumExp[T Float](row []T) float64 {
	m := row[0]
	for _, x := range row[1:] {
		m = max(m, x)
	}
	var s float64
	if r32, ok := any(row).([]float32); ok {
		m32 := float32(m)
		var buf [fastBlock]float32
		var s32 float32 // terms in (0, 1]
		for lo := 0; lo < len(r32); lo += fastBlock {
			b := buf[:min(fastBlock, len(r32)-lo)]
			for j, x := range r32[lo : lo+len(b)] {
				b[j] = x - m32
			}
			expNeg32s(b, b)
			for _, e := range b {
				s32 += e
			}
		}
		s = float64(s32)
	} else {
		for _, x := range row {
			s += math.Exp(float64(x - m))
		}
	}
	return float64(m) + math.Log(s)
}
