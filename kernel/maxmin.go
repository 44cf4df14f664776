package kernel

// MaxMin writes y = MaxMin(x): each pair (x_{2i}, x_{2i+1}) sorted, its larger entry first
// (docs/math.md, "MaxMin"). len(x) must be even, and the pairs are those of every row of
// an even width. y must not overlap x.
func MaxMin[T Float](y, x []T) {
	for i := 0; i+1 < len(x); i += 2 {
		a, b := x[i], x[i+1]
		if a >= b {
			y[i], y[i+1] = a, b
		} else {
			y[i], y[i+1] = b, a
		}
	}
}

// MaxMinGrad writes dx = dy J of MaxMin at x: each pair of dy routed back to where its
// entries came from (swapped where x_{2i} < x_{2i+1}; at a tie the order MaxMin keeps). dx
// may be dy.
func MaxMinGrad[T Float](dx, x, dy []T) {
	for i := 0; i+1 < len(x); i += 2 {
		da, db := dy[i], dy[i+1]
		if x[i] >= x[i+1] {
			dx[i], dx[i+1] = da, db
		} else {
			dx[i], dx[i+1] = db, da
		}
	}
}
