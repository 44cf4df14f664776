package data

import (
	"fmt"
	"strings"
	"testing"
)

// TestEvalWindowsScoreEveryTargetOnce checks, for lengths that are and are
// not multiples of T and of B*T, that every token but the first is a target
// exactly once, with its own predecessor as the input at the same place, and
// that padding is 0 for inputs and IgnoreTarget for targets.
func TestEvalWindowsScoreEveryTargetOnce(t *testing.T) {
	for _, T := range []int{1, 3, 4} {
		for _, B := range []int{1, 2, 5} {
			for n := 2; n <= 3*B*T+2; n++ {
				t.Run(fmt.Sprintf("T%d_B%d_n%d", T, B, n), func(t *testing.T) {
					checkEvalWindows(t, n, T, B)
				})
			}
		}
	}
}

func checkEvalWindows(t *testing.T, n, T, B int) {
	// Token values are positions + 1, so that 0 never occurs as a real input.
	tokens := make([]int, n)
	for i := range tokens {
		tokens[i] = i + 1
	}
	e, err := NewEvalWindows(tokens, T, B)
	if err != nil {
		t.Fatal(err)
	}
	if e.Scored() != n-1 {
		t.Fatalf("Scored() = %d, want %d", e.Scored(), n-1)
	}
	wantWindows := (n - 1 + T - 1) / T
	if e.Windows() != wantWindows || e.Batches() != (wantWindows+B-1)/B {
		t.Fatalf("Windows, Batches = %d, %d; want %d, %d", e.Windows(), e.Batches(), wantWindows, (wantWindows+B-1)/B)
	}
	timesScored := make([]int, n)
	total, ignored := 0, 0
	x, y := make([]int, B*T), make([]int, B*T)
	for i := range e.Batches() {
		scored, err := e.Batch(i, x, y)
		if err != nil {
			t.Fatal(err)
		}
		count := 0
		for k := range x {
			if y[k] == IgnoreTarget {
				ignored++
				if x[k] != 0 && x[k] != n {
					t.Fatalf("batch %d element %d: padded input %d, want 0 (or the last token %d)", i, k, x[k], n)
				}
				continue
			}
			target := y[k] - 1 // the position of the target
			if target < 1 || target >= n {
				t.Fatalf("batch %d element %d: target %d is not a token", i, k, y[k])
			}
			if x[k] != tokens[target-1] {
				t.Fatalf("batch %d element %d: input %d, want the preceding token %d", i, k, x[k], tokens[target-1])
			}
			if k%T > 0 && x[k-1] != tokens[target-2] {
				t.Fatalf("batch %d element %d: the window is not consecutive", i, k)
			}
			timesScored[target]++
			count++
		}
		if scored != count {
			t.Fatalf("batch %d reports %d scored targets, holds %d", i, scored, count)
		}
		total += count
	}
	if timesScored[0] != 0 {
		t.Fatal("the first token was scored")
	}
	for p := 1; p < n; p++ {
		if timesScored[p] != 1 {
			t.Fatalf("target %d scored %d times, want 1", p, timesScored[p])
		}
	}
	if total != e.Scored() || ignored != e.Batches()*B*T-total {
		t.Fatalf("scored %d and ignored %d of %d positions; want %d scored", total, ignored, e.Batches()*B*T, e.Scored())
	}
}

func TestEvalWindowsLayout(t *testing.T) {
	// 8 tokens, T=3, B=2: windows start at 0, 3, 6; the second batch holds
	// the window at 6 and an all-ignored row.
	tokens := []uint8{10, 11, 12, 13, 14, 15, 16, 17}
	e, err := NewEvalWindows(tokens, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []wantBatch{
		{[]int{10, 11, 12, 13, 14, 15}, []int{11, 12, 13, 14, 15, 16}, 6},
		{[]int{16, 17, 0, 0, 0, 0}, []int{17, -1, -1, -1, -1, -1}, 1},
	}
	if e.Batches() != len(want) {
		t.Fatalf("Batches() = %d, want %d", e.Batches(), len(want))
	}
	checkBatches(t, e, want)
}

func TestEvalWindowsErrors(t *testing.T) {
	if _, err := NewEvalWindows([]int{1}, 4, 2); err == nil {
		t.Error("a split of 1 token was accepted")
	}
	if _, err := NewEvalWindows([]int{1, 2}, 0, 2); err == nil {
		t.Error("context 0 was accepted")
	}
	if _, err := NewEvalWindows([]int{1, 2}, 2, 0); err == nil {
		t.Error("batch size 0 was accepted")
	}
	e, _ := NewEvalWindows([]int{1, 2, 3}, 2, 2)
	if _, err := e.Batch(1, make([]int, 4), make([]int, 4)); err == nil {
		t.Error("batch 1 of 1 batch was accepted")
	}
	if _, err := e.Batch(0, make([]int, 4), make([]int, 3)); err == nil {
		t.Error("y of the wrong length was accepted")
	}
}

// TestStridedEvalWindowsScoreEveryTargetOnce: with any stride 1 <= S <= T, every token but
// the first is a target exactly once, its window's inputs are the consecutive tokens before
// it, and each target after the first window's is predicted from at least T-S+1 tokens.
func TestStridedEvalWindowsScoreEveryTargetOnce(t *testing.T) {
	for _, T := range []int{1, 3, 5} {
		for S := 1; S <= T; S++ {
			for _, B := range []int{1, 3} {
				for n := 2; n <= 4*B*T+2; n++ {
					checkStridedWindows(t, n, T, S, B)
				}
			}
		}
	}
}

func checkStridedWindows(t *testing.T, n, T, S, B int) {
	t.Helper()
	what := fmt.Sprintf("n %d, T %d, S %d, B %d", n, T, S, B)
	tokens := make([]int, n)
	for i := range tokens {
		tokens[i] = i + 1
	}
	e, err := NewStridedEvalWindows(tokens, T, S, B)
	if err != nil {
		t.Fatal(err)
	}
	timesScored := make([]int, n)
	x, y := make([]int, B*T), make([]int, B*T)
	for i := range e.Batches() {
		if _, err := e.Batch(i, x, y); err != nil {
			t.Fatal(err)
		}
		for k := range y {
			if y[k] == IgnoreTarget {
				continue
			}
			target, offset := y[k]-1, k%T
			for c := 0; c <= offset; c++ { // the window holds the tokens before the target
				if x[k-c] != tokens[target-1-c] {
					t.Fatalf("%s: batch %d element %d: input %d steps back is %d, want %d", what, i, k, c, x[k-c], tokens[target-1-c])
				}
			}
			if target > T && offset+1 < T-S+1 {
				t.Fatalf("%s: target %d predicted from %d tokens, want at least T-S+1 = %d", what, target, offset+1, T-S+1)
			}
			timesScored[target]++
		}
	}
	for p := 1; p < n; p++ {
		if timesScored[p] != 1 {
			t.Fatalf("%s: target %d scored %d times, want 1", what, p, timesScored[p])
		}
	}
}

// The strided layout by hand: 8 tokens, T = 3, S = 2, B = 2. Windows start at 0, 2 and
// 4; the first scores all its targets, the others their last two.
func TestStridedEvalWindowsLayout(t *testing.T) {
	tokens := []uint8{10, 11, 12, 13, 14, 15, 16, 17}
	e, err := NewStridedEvalWindows(tokens, 3, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []wantBatch{
		{[]int{10, 11, 12, 12, 13, 14}, []int{11, 12, 13, -1, 14, 15}, 5},
		{[]int{14, 15, 16, 0, 0, 0}, []int{-1, 16, 17, -1, -1, -1}, 2},
	}
	if e.Windows() != 3 || e.Batches() != len(want) {
		t.Fatalf("Windows, Batches = %d, %d; want 3, %d", e.Windows(), e.Batches(), len(want))
	}
	checkBatches(t, e, want)
}

func TestStridedEvalWindowsErrors(t *testing.T) {
	for _, s := range []int{0, -1, 9} {
		if _, err := NewStridedEvalWindows([]int{1, 2, 3}, 8, s, 1); err == nil || !strings.Contains(err.Error(), "stride") {
			t.Errorf("stride %d: error %v, want one naming the stride", s, err)
		}
	}
}

// wantBatch is the expected content of one evaluation batch.
type wantBatch struct {
	x, y   []int
	scored int
}

// checkBatches fails unless e's batches are want, in order.
func checkBatches[T Token](t *testing.T, e *EvalWindows[T], want []wantBatch) {
	t.Helper()
	n := len(want[0].x)
	x, y := make([]int, n), make([]int, n)
	for i, w := range want {
		scored, err := e.Batch(i, x, y)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(x, y, scored) != fmt.Sprint(w.x, w.y, w.scored) {
			t.Errorf("batch %d = %v %v %d, want %v %v %d", i, x, y, scored, w.x, w.y, w.scored)
		}
	}
}
