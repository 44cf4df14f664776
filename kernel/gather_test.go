package kernel

import (
	"runtime"
	"testing"

	"lipformer/internal/gradcheck"
)

// TestScatterAddWide: on a table wide enough for the scatter to split its columns
// across goroutines, the gradient equals a serial scatter-add.
func TestScatterAddWide(t *testing.T) {
	const v, d, n = 5, 256, 300
	ids := make([]int, n)
	for i := range ids {
		ids[i] = (i * 7) % 4 // row 4 unused
	}
	dy := gradcheck.Rand(3, 1, n, d).Data().([]float64)
	if Workers(d, v+n) < 2 && runtime.GOMAXPROCS(0) > 1 {
		t.Fatalf("the case is too small to be split")
	}
	got := make([]float64, v*d)
	for i := range got {
		got[i] = 7 // stale values must be cleared
	}
	ScatterAdd(got, dy, ids, d)
	want := make([]float64, v*d)
	for r, id := range ids {
		for j := 0; j < d; j++ {
			want[id*d+j] += dy[r*d+j]
		}
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("element %d: got %v, want %v", i, got[i], want[i])
		}
	}
}
