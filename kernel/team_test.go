package kernel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// checkParts runs Parallel(w, f) with parts that take a little time and reports an error
// unless every part ran exactly once and had returned (its write visible) when Parallel
// returned.
func checkParts(t *testing.T, w int, nested bool) {
	t.Helper()
	runs := make([]atomic.Int32, w)
	out := make([]int, w) // written by each part, read after Parallel: the race detector checks the hand-over
	Parallel(w, func(i int) {
		runs[i].Add(1)
		if nested {
			var inner atomic.Int32
			Parallel(2, func(int) { inner.Add(1) })
			if inner.Load() != 2 {
				t.Errorf("part %d: nested Parallel(2) ran %d parts", i, inner.Load())
			}
		}
		time.Sleep(time.Duration(i%3) * 20 * time.Microsecond)
		out[i] = i + 1
	})
	for i := range w {
		if n := runs[i].Load(); n != 1 || out[i] != i+1 {
			t.Errorf("Parallel(%d): part %d ran %d times, wrote %d by the return", w, i, n, out[i])
		}
	}
}

// TestParallelRunsEveryPartOnce: for every width, each part runs once and has returned
// when Parallel returns: with the workers polling (calls in a row), parked (calls apart by
// more than spinFor), and beyond the processors (parts given new goroutines).
func TestParallelRunsEveryPartOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for w := 0; w <= 9; w++ {
		for range 50 {
			checkParts(t, w, false)
		}
		for range 5 {
			time.Sleep(3 * spinFor)
			checkParts(t, w, false)
		}
	}
}

// TestParallelOverlapsAndNests: Parallel called from several goroutines at once, with a
// Parallel inside each part, runs every part once; callers that find every worker taken
// start goroutines instead of waiting for one.
func TestParallelOverlapsAndNests(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for k := range 200 {
				checkParts(t, 2+k%4, k%2 == 0)
			}
		})
	}
	wg.Wait()
}

// TestParallelWithOneProcessor: at GOMAXPROCS 1, where a polling worker and its caller
// share the one processor, the workers of earlier calls still run every part once, nested
// calls included. (It would pass, slowly, without the pollers' yields: the blocking after
// spinFor, and the runtime's preemption, hand the processor over too.)
func TestParallelWithOneProcessor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	checkParts(t, 2, false) // the worker polls now
	runtime.GOMAXPROCS(1)
	for w := 1; w <= 4; w++ {
		checkParts(t, w, true)
	}
}

// TestParallelJobsRunsEveryJobOnce: ParallelJobs runs every job once, each on a worker
// index below the workers asked for, for more jobs than workers and fewer.
func TestParallelJobsRunsEveryJobOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	for _, c := range [][2]int{{0, 1}, {1, 3}, {2, 3}, {50, 3}, {50, 1}} {
		n, workers := c[0], c[1]
		runs := make([]atomic.Int32, n)
		var badWorker atomic.Bool
		ParallelJobs(n, workers, func(w, j int) {
			if w < 0 || w >= workers {
				badWorker.Store(true)
			}
			runs[j].Add(1)
		})
		for j := range runs {
			if got := runs[j].Load(); got != 1 {
				t.Errorf("%d jobs on %d workers: job %d ran %d times", n, workers, j, got)
			}
		}
		if badWorker.Load() {
			t.Errorf("%d jobs on %d workers: a worker index out of range", n, workers)
		}
	}
}
