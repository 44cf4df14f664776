package kernel

import (
	"fmt"
	"math"
)

// L2Mix returns tied L2 attention's value maps M_h = (W^{Q,h})^T W^{V,h} / sqrt(d), (H, d, d),
// for wq and wv (D, D') with head h in columns h*d..(h+1)*d (docs/math.md, "Bounds of tied L2 attention"). Head h of the
// attention is P Q_h M_h, so that an incremental decoder needs to keep only the queries
// Q_h = X W^{Q,h} of past positions: the op ops.L2Values(wq, wv) is wq's column blocks
// times these. It returns an error for inconsistent sizes.
func L2Mix[T Float](wq, wv []T, rows, cols, heads int) ([]T, error) {
	if rows < 1 || cols < 1 || heads < 1 || cols%heads != 0 || len(wq) != rows*cols || len(wv) != rows*cols {
		return nil, fmt.Errorf("l2 mix: wq of %d and wv of %d elements as (%d, %d) with %d heads, want both (D, D'), D' a multiple of the heads", len(wq), len(wv), rows, cols, heads)
	}
	d := cols / heads
	s := T(1 / math.Sqrt(float64(d)))
	out := make([]T, heads*d*d)
	for h := range heads {
		Gemm(true, false, d, d, rows, s, wq[h*d:], cols, wv[h*d:], cols, 0, out[h*d*d:], d)
	}
	return out, nil
}
