package kernel

import (
	"runtime"
	"sync/atomic"
)

// grain is the fewest elements (or row elements) a goroutine of an elementwise or
// row-wise kernel is given: below it, starting a goroutine costs more than it saves.
const grain = 1 << 15

// Workers is the number of goroutines ParallelFor uses for n items of the given cost each
// (elements of work per item): at most GOMAXPROCS, at least 1, and none with less than
// 2^15 elements of work.
func Workers(n, cost int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n*max(cost, 1)/grain, n))
}

// ParallelFor splits the items [0, n) into w = Workers(n, cost) contiguous chunks and calls
// f(i, lo, hi) for chunk i, the first on the calling goroutine and the others on
// Parallel's workers; it returns when all are done. The chunks depend on GOMAXPROCS: a
// caller that sums across items must keep partial sums per fixed block of items, not per
// chunk, for its result not to.
func ParallelFor(n, cost int, f func(i, lo, hi int)) {
	w := Workers(n, cost)
	if w == 1 {
		f(0, 0, n)
		return
	}
	Parallel(w, func(i int) { f(i, i*n/w, (i+1)*n/w) })
}

// ParallelJobs calls f(w, j) for every job j in [0, n) on Parallel(workers): each worker w
// takes the next job not yet taken as it becomes free, so a worker that is descheduled (on
// a shared machine) holds up no more than its current job. A job's result must not depend
// on w, which is for per-worker scratch.
func ParallelJobs(n, workers int, f func(w, j int)) {
	var next atomic.Int64
	Parallel(workers, func(w int) {
		for j := int(next.Add(1) - 1); j < n; j = int(next.Add(1) - 1) {
			f(w, j)
		}
	})
}

// sumBlock is the number of rows of one partial sum of colSums: fixed, so that the sums do
// not depend on the number of goroutines.
const sumBlock = 64

// colSumsLen is the scratch colSums needs for n rows of width d.
func colSumsLen(n, d int) int { return (n + sumBlock - 1) / sumBlock * d }

// colSums writes into y (d) the sum over rows r < n of the rows that add(acc, r) adds into
// acc (d): blocks of sumBlock rows are summed in parallel into part (colSumsLen(n, d)), then
// the blocks' sums are added in order.
func colSums[T Float](y []T, n int, part []T, add func(acc []T, r int)) {
	d := len(y)
	blocks := (n + sumBlock - 1) / sumBlock
	ParallelFor(blocks, sumBlock*d, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			acc := part[b*d : (b+1)*d]
			clear(acc)
			for r := b * sumBlock; r < min(n, (b+1)*sumBlock); r++ {
				add(acc, r)
			}
		}
	})
	clear(y)
	for b := 0; b < blocks; b++ {
		AddSerial(y, y, part[b*d:(b+1)*d])
	}
}

// ColSum writes y[j] = the sum over rows r of x[r*len(y)+j], with partial sums in ws, in
// parallel over blocks of rows.
func ColSum[T Float](y, x []T, ws *Workspace) {
	d := len(y)
	n := len(x) / d
	colSums(y, n, Scratch[T](ws, 1, colSumsLen(n, d))[0], func(acc []T, r int) { AddSerial(acc, acc, x[r*d:(r+1)*d]) })
}

// ColSumSerial is ColSum on the calling goroutine, with the same blocks of rows and so the
// same sums bit for bit; part is scratch of len(y) elements.
func ColSumSerial[T Float](y, x, part []T) {
	d := len(y)
	n := len(x) / d
	part = part[:d]
	clear(y)
	for lo := 0; lo < n; lo += sumBlock {
		clear(part)
		for r := lo; r < min(n, lo+sumBlock); r++ {
			AddSerial(part, part, x[r*d:(r+1)*d])
		}
		AddSerial(y, y, part)
	}
}
