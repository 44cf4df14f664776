package sgemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// TestPackedMatchesSgemm: products with a packed B are bit-identical to Sgemm's (which
// the other tests check against a float64 reference), for both kernels, every transpose
// combination, sizes that cut tiles and blocks (m beyond mc, n beyond nc, k beyond kc),
// alpha and beta, padded leading dimensions, whole and split into column ranges.
func TestPackedMatchesSgemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for name, kern := range kernelSets() {
		for _, tA := range transposes {
			for _, tB := range transposes {
				for _, sz := range [][3]int{{1, 1, 1}, {5, 17, 7}, {6, 16, 256}, {13, 100, 300}, {170, 47, 33}, {3, 1030, 20}, {16, 768, 256}} {
					for _, ab := range [][2]float32{{1, 0}, {-0.5, 1}, {1.5, 0.3}, {0, 0.3}} {
						m, n, k := sz[0], sz[1], sz[2]
						name := fmt.Sprintf("%s tA=%c tB=%c m=%d n=%d k=%d alpha=%g beta=%g", name, tA, tB, m, n, k, ab[0], ab[1])
						checkPacked(t, name, kern, rng, tA, tB, m, n, k, ab[0], ab[1])
					}
				}
			}
		}
	}
}

// checkPacked compares one product of gemm with kern against the packed product, whole
// and by column ranges of 16, 32 and the rest.
func checkPacked(t *testing.T, name string, kern kernels, rng *rand.Rand, tA, tB blas.Transpose, m, n, k int, alpha, beta float32) {
	t.Helper()
	rowA, colA := m, k
	if tA != blas.NoTrans {
		rowA, colA = k, m
	}
	rowB, colB := k, n
	if tB != blas.NoTrans {
		rowB, colB = n, k
	}
	lda, ldb, ldc := colA+1, colB+2, n+3
	a, b := randSlice(rng, lda*(rowA-1)+colA), randSlice(rng, ldb*(rowB-1)+colB)
	c0 := randSlice(rng, ldc*m)
	want := append([]float32(nil), c0...)
	gemm(kern, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, want, ldc)
	p := PackB(tB, k, n, b, ldb)
	whole := append([]float32(nil), c0...)
	p.gemmColumns(kern, tA, m, alpha, a, lda, beta, whole, ldc, 0, n)
	split := append([]float32(nil), c0...)
	for j0 := 0; j0 < n; {
		j1 := min(n, j0+nr*(1+j0/nr%2)) // ranges of 16 and 32 columns in turn
		p.gemmColumns(kern, tA, m, alpha, a, lda, beta, split, ldc, j0, j1)
		j0 = j1
	}
	for i := range want {
		if math.Float32bits(whole[i]) != math.Float32bits(want[i]) || math.Float32bits(split[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: element %d (row %d, column %d) is %v packed, %v split into column ranges, %v by Sgemm",
				name, i, i/ldc, i%ldc, whole[i], split[i], want[i])
		}
	}
}

// TestPackedColumnsLeaveTheRest: GemmColumns writes its columns only.
func TestPackedColumnsLeaveTheRest(t *testing.T) {
	const m, n, k = 7, 50, 9
	rng := rand.New(rand.NewPCG(7, 8))
	a, b := randSlice(rng, m*k), randSlice(rng, k*n)
	c := randSlice(rng, m*n)
	old := append([]float32(nil), c...)
	PackB(blas.NoTrans, k, n, b, n).GemmColumns(blas.NoTrans, m, 1, a, k, 0, c, n, 16, 32)
	for i, v := range c {
		if j := i % n; (j < 16 || j >= 32) && math.Float32bits(v) != math.Float32bits(old[i]) {
			t.Fatalf("column %d of row %d changed from %v to %v", j, i/n, old[i], v)
		}
	}
}

func TestPackedPanics(t *testing.T) {
	b := make([]float32, 12)
	p := PackB(blas.NoTrans, 3, 4, b, 4)
	for _, c := range []struct {
		want string
		f    func()
	}{
		{badTranspose, func() { PackB('x', 3, 4, b, 4) }},
		{shortB, func() { PackB(blas.NoTrans, 4, 4, b, 4) }},
		{badLdB, func() { PackB(blas.Trans, 3, 4, b, 2) }},
		{"bad column range", func() { p.GemmColumns(blas.NoTrans, 1, 1, make([]float32, 3), 3, 0, make([]float32, 4), 4, 1, 4) }},
		{"bad column range", func() { p.GemmColumns(blas.NoTrans, 1, 1, make([]float32, 3), 3, 0, make([]float32, 4), 4, 0, 5) }},
		{shortA, func() { p.Gemm(blas.NoTrans, 2, 1, make([]float32, 3), 3, 0, make([]float32, 8), 4) }},
		{shortC, func() { p.Gemm(blas.NoTrans, 2, 1, make([]float32, 6), 3, 0, make([]float32, 7), 4) }},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), c.want) {
					t.Errorf("panic %v, want %q", r, c.want)
				}
			}()
			c.f()
		}()
	}
}

// TestPackedAllocs: a steady-state product with a packed B allocates nothing.
func TestPackedAllocs(t *testing.T) {
	const m, n, k = 16, 768, 256
	a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	p := PackB(blas.NoTrans, k, n, b, n)
	if allocs := testing.AllocsPerRun(20, func() { p.Gemm(blas.NoTrans, m, 1, a, k, 0, c, n) }); allocs > 0 {
		t.Errorf("%v allocations per call, want 0", allocs)
	}
}
