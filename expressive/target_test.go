package expressive

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestRandomTargetSparsity(t *testing.T) {
	const ratio = 50.0
	for _, L := range []int{1, 2, 7, 64} {
		for _, k := range []int{1, 2, 4} {
			for seed := range uint64(5) {
				tg, err := RandomTarget(L, k, ratio, rand.New(rand.NewPCG(seed, 9)))
				if err != nil {
					t.Fatal(err)
				}
				if err := tg.Validate(); err != nil {
					t.Fatalf("L=%d k=%d: %v", L, k, err)
				}
				colCount := make([]int, L)
				for i, row := range tg.Rows {
					if len(row) < 1 || len(row) > k {
						t.Fatalf("L=%d k=%d: row %d has %d entries, want 1..%d", L, k, i, len(row), k)
					}
					if k == 1 && len(row) != 1 {
						t.Fatalf("k=1 row %d has %d entries", i, len(row))
					}
					for _, e := range row {
						colCount[e.Col]++
						if e.Val < 1 || e.Val > ratio {
							t.Fatalf("value %v outside [1, %v]", e.Val, ratio)
						}
					}
				}
				for j, c := range colCount {
					if c < 1 || c > k {
						t.Fatalf("L=%d k=%d: column %d has %d entries, want 1..%d", L, k, j, c, k)
					}
				}
			}
		}
	}
}

// Duplicates between permutations merge, so some rows of a k = 4 target over a short
// sequence must have fewer than 4 entries; the union of supports is still counted right.
func TestRandomTargetMergesDuplicates(t *testing.T) {
	tg, err := RandomTarget(4, 4, 10, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	short := 0
	for _, row := range tg.Rows {
		if len(row) < 4 {
			short++
		}
	}
	if short == 0 {
		t.Fatal("4 random permutations of 4 gave a full 4 x 4 support: duplicates are not merging (or a 1/576 event)")
	}
}

func TestRandomTargetLogUniform(t *testing.T) {
	const ratio = 1000.0
	tg, err := RandomTarget(2000, 2, ratio, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	var sum, n float64
	below := 0.0
	for _, row := range tg.Rows {
		for _, e := range row {
			u := math.Log(e.Val) / math.Log(ratio)
			sum += u
			n++
			if u < 0.25 {
				below++
			}
		}
	}
	// u is uniform on [0, 1): mean 1/2 (sd 0.289/sqrt(n)), P(u < 1/4) = 1/4 (sd 0.433/sqrt(n)).
	if m := sum / n; math.Abs(m-0.5) > 5*0.289/math.Sqrt(n) {
		t.Fatalf("mean of log-value fraction %v, want 0.5", m)
	}
	if f := below / n; math.Abs(f-0.25) > 5*0.433/math.Sqrt(n) {
		t.Fatalf("fraction of log-values in the lowest quarter %v, want 0.25", f)
	}
}

func TestRandomTargetDeterministic(t *testing.T) {
	a, _ := RandomTarget(30, 3, 20, rand.New(rand.NewPCG(7, 8)))
	b, _ := RandomTarget(30, 3, 20, rand.New(rand.NewPCG(7, 8)))
	c, _ := RandomTarget(30, 3, 20, rand.New(rand.NewPCG(7, 9)))
	if !equalTargets(a, b) {
		t.Fatal("same seed gave different targets")
	}
	if equalTargets(a, c) {
		t.Fatal("different seeds gave the same target")
	}
}

func equalTargets(a, b *Target) bool {
	if a.L != b.L {
		return false
	}
	for i := range a.Rows {
		if len(a.Rows[i]) != len(b.Rows[i]) {
			return false
		}
		for n := range a.Rows[i] {
			if a.Rows[i][n] != b.Rows[i][n] {
				return false
			}
		}
	}
	return true
}

func TestRandomTargetErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		L, k  int
		ratio float64
	}{{0, 1, 2}, {4, 0, 2}, {4, 1, 0.5}, {4, 1, math.NaN()}, {4, 1, math.Inf(1)}} {
		if _, err := RandomTarget(c.L, c.k, c.ratio, rng); err == nil {
			t.Errorf("RandomTarget(%d, %d, %v) gave no error", c.L, c.k, c.ratio)
		}
	}
	if _, err := RandomTarget(4, 1, 2, nil); err == nil {
		t.Error("nil generator gave no error")
	}
	bad := &Target{L: 2, Rows: [][]Entry{{{Col: 0, Val: 1}}, {}}}
	if bad.Validate() == nil {
		t.Error("empty row passed Validate")
	}
}

func TestTargetDense(t *testing.T) {
	tg := &Target{L: 2, Rows: [][]Entry{{{Col: 1, Val: 3}}, {{Col: 0, Val: 2}, {Col: 1, Val: 5}}}}
	a := tg.Dense()
	want := [][]float64{{0, 3}, {2, 5}}
	for i := range 2 {
		for j := range 2 {
			if a.At(i, j) != want[i][j] {
				t.Fatalf("A[%d][%d] = %v, want %v", i, j, a.At(i, j), want[i][j])
			}
		}
	}
}
