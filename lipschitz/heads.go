package lipschitz

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// HeadSlices splits a full projection matrix w, (D, D) in docs/math.md's layout, into
// its heads: head h is the column block h*d..(h+1)*d with d = D/heads, a
// (D, d) matrix. The blocks are copies, independent of w. Any (R, C) matrix
// with C divisible by heads is accepted.
func HeadSlices(w *mat.Dense, heads int) ([]*mat.Dense, error) {
	if w == nil || w.IsEmpty() {
		return nil, errors.New("lipschitz: HeadSlices of a nil or empty matrix")
	}
	if heads < 1 {
		return nil, fmt.Errorf("lipschitz: HeadSlices heads = %d, want >= 1", heads)
	}
	r, c := w.Dims()
	if c%heads != 0 {
		return nil, fmt.Errorf("lipschitz: HeadSlices of a %dx%d matrix: %d columns not divisible by %d heads", r, c, c, heads)
	}
	d := c / heads
	out := make([]*mat.Dense, heads)
	for h := range heads {
		out[h] = mat.DenseCopyOf(w.Slice(0, r, h*d, (h+1)*d)) // (R, d)
	}
	return out, nil
}
