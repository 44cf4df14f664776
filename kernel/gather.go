package kernel

// Gather writes row r of y = row ids[r] of table, for rows of width d and ids in range, in
// parallel over rows.
func Gather[T Float](y, table []T, ids []int, d int) {
	ParallelFor(len(ids), d, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			copy(y[r*d:(r+1)*d], table[ids[r]*d:(ids[r]+1)*d])
		}
	})
}

// ScatterAdd is Gather's adjoint: it writes dt = 0 and then adds row r of dy into row
// ids[r] of dt for every r in order (rows of width d), each goroutine owning a band of the
// d columns, so that the sums do not depend on the number of goroutines.
func ScatterAdd[T Float](dt, dy []T, ids []int, d int) {
	rows := len(dt) / d
	ParallelFor(d, rows+len(ids), func(_, lo, hi int) {
		for r := 0; r < rows; r++ {
			clear(dt[r*d+lo : r*d+hi])
		}
		for r, id := range ids {
			dst, src := dt[id*d+lo:id*d+hi], dy[r*d+lo:r*d+hi]
			for j, v := range src {
				dst[j] += v
			}
		}
	})
}
