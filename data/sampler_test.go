package data

import (
	"math"
	"slices"
	"testing"
)

// positions returns tokens whose values are their own positions, so that a
// window's start can be read from its first token.
func positions(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

func batch(t *testing.T, s *Sampler[int], step int) (x, y []int) {
	t.Helper()
	x = make([]int, s.BatchSize()*s.Context())
	y = make([]int, len(x))
	if err := s.Batch(step, x, y); err != nil {
		t.Fatal(err)
	}
	return x, y
}

func TestSamplerWindowsAreShiftedRuns(t *testing.T) {
	const n, T, B = 1000, 16, 8
	s, err := NewSampler(positions(n), T, B, 42)
	if err != nil {
		t.Fatal(err)
	}
	for step := range 50 {
		x, y := batch(t, s, step)
		for b := range B {
			start := x[b*T]
			if start < 0 || start+T >= n {
				t.Fatalf("step %d row %d starts at %d; the window of %d tokens does not fit in %d", step, b, start, T+1, n)
			}
			for i := range T {
				if x[b*T+i] != start+i || y[b*T+i] != start+i+1 {
					t.Fatalf("step %d row %d position %d: x=%d y=%d, want %d %d", step, b, i, x[b*T+i], y[b*T+i], start+i, start+i+1)
				}
			}
		}
	}
}

func TestSamplerIsAPureFunctionOfSeedAndStep(t *testing.T) {
	tokens := positions(5000)
	a, _ := NewSampler(tokens, 8, 4, 7)
	b, _ := NewSampler(tokens, 8, 4, 7)
	// Draw b's batches in another order: batch k must not depend on history.
	want := make(map[int][]int)
	for _, step := range []int{9, 3, 0, 1_000_000, 3} {
		x, _ := batch(t, b, step)
		want[step] = x
	}
	for _, step := range []int{0, 3, 9, 1_000_000} {
		x, _ := batch(t, a, step)
		if !slices.Equal(x, want[step]) {
			t.Fatalf("step %d differs between samplers with the same seed", step)
		}
	}
	x0, _ := batch(t, a, 0)
	x1, _ := batch(t, a, 1)
	if slices.Equal(x0, x1) {
		t.Fatal("steps 0 and 1 drew the same batch")
	}
	c, _ := NewSampler(tokens, 8, 4, 8)
	if xc, _ := batch(t, c, 0); slices.Equal(x0, xc) {
		t.Fatal("seeds 7 and 8 drew the same batch 0")
	}
}

// TestSamplerStartsAreUniform draws many windows from a short split and
// checks that every possible start occurs, none other does, and the counts
// are those of a uniform draw: each within 6 standard deviations of the mean.
func TestSamplerStartsAreUniform(t *testing.T) {
	const n, T, B, steps = 20, 4, 10, 1600
	s, err := NewSampler(positions(n), T, B, 1)
	if err != nil {
		t.Fatal(err)
	}
	starts := n - T // 0 .. n-T-1
	counts := make([]int, n)
	for step := range steps {
		x, _ := batch(t, s, step)
		for b := range B {
			counts[x[b*T]]++
		}
	}
	draws := float64(steps * B)
	p := 1 / float64(starts)
	mean, sd := draws*p, math.Sqrt(draws*p*(1-p))
	for start, c := range counts {
		if start >= starts {
			if c != 0 {
				t.Errorf("start %d drawn %d times; the last possible start is %d", start, c, starts-1)
			}
			continue
		}
		if diff := float64(c) - mean; diff > 6*sd || diff < -6*sd {
			t.Errorf("start %d drawn %d times, expected %.0f ± %.0f", start, c, mean, 6*sd)
		}
	}
}

func TestSamplerCompactTokens(t *testing.T) {
	v := NewVocab([]byte("abcdefgh"))
	text := []byte("abcdefghhgfedcbaabcdefgh")
	wide, _ := v.Encode(text)
	compact, _ := v.EncodeCompact(text)
	sw, _ := NewSampler(wide, 5, 3, 99)
	sc, err := NewSampler(compact, 5, 3, 99)
	if err != nil {
		t.Fatal(err)
	}
	for step := range 10 {
		xw, yw := batch(t, sw, step)
		xc, yc := make([]int, 15), make([]int, 15)
		if err := sc.Batch(step, xc, yc); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(xw, xc) || !slices.Equal(yw, yc) {
			t.Fatalf("step %d: int and uint8 tokens give different batches", step)
		}
	}
}

func TestSamplerErrors(t *testing.T) {
	if _, err := NewSampler(positions(16), 16, 2, 0); err == nil {
		t.Error("a split of 16 tokens was accepted for context 16, which needs 17")
	}
	if _, err := NewSampler(positions(17), 16, 2, 0); err != nil {
		t.Errorf("a split of 17 tokens was rejected for context 16: %v", err)
	}
	for _, bad := range [][2]int{{0, 2}, {4, 0}, {-1, 1}} {
		if _, err := NewSampler(positions(100), bad[0], bad[1], 0); err == nil {
			t.Errorf("context %d, batch %d accepted", bad[0], bad[1])
		}
	}
	s, _ := NewSampler(positions(100), 4, 2, 0)
	if err := s.Batch(0, make([]int, 7), make([]int, 8)); err == nil {
		t.Error("x of the wrong length accepted")
	}
	if err := s.Batch(-1, make([]int, 8), make([]int, 8)); err == nil {
		t.Error("negative step accepted")
	}
}

func TestSamplerRowsAreTheRowsOfTheBatch(t *testing.T) {
	const n, T, B = 1000, 8, 6
	s, err := NewSampler(positions(n), T, B, 7)
	if err != nil {
		t.Fatal(err)
	}
	for step := range 20 {
		x, y := batch(t, s, step)
		for _, rows := range []int{1, 2, 3, 6} {
			for first := 0; first+rows <= B; first += rows {
				xs, ys := make([]int, rows*T), make([]int, rows*T)
				if err := s.Rows(step, first, xs, ys); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(xs, x[first*T:(first+rows)*T]) || !slices.Equal(ys, y[first*T:(first+rows)*T]) {
					t.Fatalf("step %d: rows %d..%d differ from those of the batch", step, first, first+rows-1)
				}
			}
		}
	}
	for _, c := range []struct{ first, len int }{{-1, T}, {5, 2 * T}, {0, 7 * T}, {0, T + 1}} {
		if err := s.Rows(0, c.first, make([]int, c.len), make([]int, c.len)); err == nil {
			t.Errorf("Rows(first %d, %d elements) = nil, want an error", c.first, c.len)
		}
	}
}
