package expressive

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// Entry is one nonzero of a sparse target row: column Col holds the value Val > 0.
type Entry struct {
	Col int
	Val float64
}

// Target is a nonnegative L x L attention pattern stored by rows. Rows[i] lists the
// support S_i of row i in increasing column order; every row is non-empty.
type Target struct {
	L    int
	Rows [][]Entry
}

// RandomTarget draws a k-sparse target: the support is the union of k uniformly random
// permutations (entry (i, pi_p(i)) for p = 1..k; an entry drawn by several permutations is
// kept once, so a row or column has between 1 and k entries), and each entry's value is
// log-uniform on [1, ratio]. Values are drawn row by row in column order. k larger than L
// is allowed and simply saturates at L entries per row.
func RandomTarget(L, k int, ratio float64, rng *rand.Rand) (*Target, error) {
	if L < 1 {
		return nil, fmt.Errorf("expressive: target length L = %d, want >= 1", L)
	}
	if k < 1 {
		return nil, fmt.Errorf("expressive: sparsity k = %d, want >= 1", k)
	}
	if !(ratio >= 1) || math.IsInf(ratio, 1) {
		return nil, fmt.Errorf("expressive: value range ratio = %v, want finite and >= 1", ratio)
	}
	if rng == nil {
		return nil, fmt.Errorf("expressive: RandomTarget needs a random generator")
	}
	support := make([]map[int]bool, L)
	for i := range support {
		support[i] = make(map[int]bool, k)
	}
	for range k {
		for i, j := range rng.Perm(L) {
			support[i][j] = true
		}
	}
	logRatio := math.Log(ratio)
	t := &Target{L: L, Rows: make([][]Entry, L)}
	for i, set := range support {
		cols := make([]int, 0, len(set))
		for j := range set {
			cols = append(cols, j)
		}
		sort.Ints(cols)
		row := make([]Entry, len(cols))
		for n, j := range cols {
			row[n] = Entry{Col: j, Val: math.Exp(rng.Float64() * logRatio)}
		}
		t.Rows[i] = row
	}
	return t, nil
}

// Validate checks that t is a well-formed target: L rows, each non-empty, with strictly
// increasing in-range columns and finite positive values.
func (t *Target) Validate() error {
	if t == nil || t.L < 1 || len(t.Rows) != t.L {
		return fmt.Errorf("expressive: target must have L >= 1 rows")
	}
	for i, row := range t.Rows {
		if len(row) == 0 {
			return fmt.Errorf("expressive: target row %d is empty", i)
		}
		for n, e := range row {
			if e.Col < 0 || e.Col >= t.L || (n > 0 && e.Col <= row[n-1].Col) {
				return fmt.Errorf("expressive: target row %d: columns must increase within [0, %d)", i, t.L)
			}
			if !(e.Val > 0) || math.IsInf(e.Val, 1) {
				return fmt.Errorf("expressive: target entry (%d, %d) = %v, want finite and > 0", i, e.Col, e.Val)
			}
		}
	}
	return nil
}

// Dense returns the target as a dense matrix A. // (L, L)
func (t *Target) Dense() *mat.Dense {
	a := mat.NewDense(t.L, t.L, nil)
	for i, row := range t.Rows {
		for _, e := range row {
			a.Set(i, e.Col, e.Val)
		}
	}
	return a
}
