package sgemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// kernelSets are the micro-kernels to test, by name: the portable one, which Sgemm uses
// on processors without AVX2 and FMA and on other architectures; the ones Sgemm picks
// here (the same again where that is the portable one); where those include a direct
// kernel, their packed kernel alone; and the AVX2 kernels where Sgemm picks the AVX-512
// ones (addAVX2).
func kernelSets() map[string]kernels {
	sets := map[string]kernels{"go": {packed: kernelGo}, "best": bestKernels()}
	if best := bestKernels(); best.direct != nil {
		sets["best-packed"] = kernels{packed: best.packed}
	}
	addAVX2(sets)
	return sets
}

// product is one test case: sizes, transposes, scalars and the padding of the leading
// dimensions beyond their minimum.
type product struct {
	tA, tB     blas.Transpose
	m, n, k    int
	alpha      float32
	beta       float32
	padA, padB int
	padC       int
}

func (p product) String() string {
	return fmt.Sprintf("tA=%c tB=%c m=%d n=%d k=%d alpha=%g beta=%g pad=%d,%d,%d",
		p.tA, p.tB, p.m, p.n, p.k, p.alpha, p.beta, p.padA, p.padB, p.padC)
}

// check runs p through gemm with kern against a float64 triple loop. An element is
// accepted if it is within (k + 2) * u * (sum_q |alpha a_iq b_qj| + |beta c_ij|) of the
// reference, u the float32 unit roundoff: the classical forward error bound of a k-term
// float32 dot product, with one more rounding for alpha (folded into packed A) and one for
// the beta term. Elements of C outside the m x n window must keep their bits.
func check(t *testing.T, kern kernels, p product, rng *rand.Rand) {
	t.Helper()
	rowA, colA := p.m, p.k
	if p.tA != blas.NoTrans {
		rowA, colA = p.k, p.m
	}
	rowB, colB := p.k, p.n
	if p.tB != blas.NoTrans {
		rowB, colB = p.n, p.k
	}
	lda, ldb, ldc := max(1, colA)+p.padA, max(1, colB)+p.padB, max(1, p.n)+p.padC
	a := randSlice(rng, max(0, lda*(rowA-1)+colA))
	b := randSlice(rng, max(0, ldb*(rowB-1)+colB))
	c := randSlice(rng, ldc*p.m)
	if p.beta == 0 {
		for i := 0; i < p.m; i++ {
			for j := 0; j < p.n; j++ {
				c[i*ldc+j] = float32(math.NaN())
			}
			for j := p.n; j < ldc; j++ { // padding keeps finite values, to be compared bitwise
				c[i*ldc+j] = float32(i - j)
			}
		}
	}
	old := append([]float32(nil), c...)
	gemm(kern, p.tA, p.tB, p.m, p.n, p.k, p.alpha, a, lda, b, ldb, p.beta, c, ldc)

	const eps = 1.0 / (1 << 24) // float32 unit roundoff
	opA := func(i, q int) float64 {
		if p.tA == blas.NoTrans {
			return float64(a[i*lda+q])
		}
		return float64(a[q*lda+i])
	}
	opB := func(q, j int) float64 {
		if p.tB == blas.NoTrans {
			return float64(b[q*ldb+j])
		}
		return float64(b[j*ldb+q])
	}
	for i := 0; i < p.m; i++ {
		for j := 0; j < ldc; j++ {
			got := c[i*ldc+j]
			if j >= p.n {
				if math.Float32bits(got) != math.Float32bits(old[i*ldc+j]) {
					t.Fatalf("%v (%s): padding C[%d][%d] changed from %v to %v", p, t.Name(), i, j, old[i*ldc+j], got)
				}
				continue
			}
			var want, mag float64
			for q := 0; q < p.k; q++ {
				v := float64(p.alpha) * opA(i, q) * opB(q, j)
				want += v
				mag += math.Abs(v)
			}
			if p.beta != 0 {
				cv := float64(p.beta) * float64(old[i*ldc+j])
				want += cv
				mag += math.Abs(cv)
			}
			tol := (float64(p.k) + 2) * eps * mag
			if diff := math.Abs(float64(got) - want); !(diff <= tol) {
				t.Fatalf("%v: C[%d][%d] = %v, want %v (|diff| %g > tol %g)", p, i, j, got, want, diff, tol)
			}
		}
	}
}

// randSlice is n normal random float32s.
func randSlice(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

var (
	transposes = []blas.Transpose{blas.NoTrans, blas.Trans}
	alphas     = []float32{1, -0.5, 0}
	betas      = []float32{0, 1, 0.3}
)

// TestSmall: every size 1..70 along each dimension in turn (the others at sizes that cut
// tiles as well), which covers every edge tile (and so the AVX2 kernel's 2- and 4-row
// variants), every transpose combination, alpha and beta, with and without padded leading
// dimensions.
func TestSmall(t *testing.T) {
	for name, kern := range kernelSets() {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			for _, tA := range transposes {
				for _, tB := range transposes {
					for s := 1; s <= 70; s++ {
						for i, dims := range [][3]int{{s, 19, 7}, {13, s, 9}, {7, 17, s}, {s, s, s}} {
							alpha := alphas[(s+i)%len(alphas)]
							beta := betas[(s/3+i)%len(betas)]
							pad := (s + i) % 3
							check(t, kern, product{tA, tB, dims[0], dims[1], dims[2], alpha, beta, pad, 2 * pad, 3 * pad}, rng)
						}
					}
				}
			}
		})
	}
}

// TestEdgeRowsMatchFullTiles: a row of C is bit-identical whether a tile cut by the edge
// of A (1..mr-1 rows: the AVX2 kernel's short variants) or a full tile computes it, for
// beta 0 and 1 (a full tile adds beta C in its FMA, an edge tile after it: the same
// for these two), and with depth beyond kc, whose later blocks accumulate with beta 1. So
// a batch decoder's logits do not depend on how its sequences are split between cores.
func TestEdgeRowsMatchFullTiles(t *testing.T) {
	const n = 40 // column tiles of 16, 16 and 8
	for name, kern := range kernelSets() {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, c := range []struct {
			k    int // 37: 9 steps of 4 and 1 more; 300: a second block of 44
			beta float32
		}{{37, 0}, {37, 1}, {kc + 44, 0}, {kc + 44, 1}} {
			k := c.k
			a, b, c0 := randSlice(rng, 2*mr*k), randSlice(rng, k*n), randSlice(rng, 2*mr*n)
			full := append([]float32(nil), c0...)
			gemm(kern, blas.NoTrans, blas.NoTrans, 2*mr, n, k, 0.7, a, k, b, n, c.beta, full, n)
			for m := 1; m < mr; m++ {
				for _, off := range []int{0, 2*mr - m} {
					part := append([]float32(nil), c0[off*n:(off+m)*n]...)
					gemm(kern, blas.NoTrans, blas.NoTrans, m, n, k, 0.7, a[off*k:], k, b, n, c.beta, part, n)
					for i, v := range part {
						if w := full[off*n+i]; math.Float32bits(v) != math.Float32bits(w) {
							t.Fatalf("%s, k %d, beta %v: row %d of %d rows alone, column %d: %v, in a full tile %v", name, k, c.beta, off+i/n, m, i%n, v, w)
						}
					}
				}
			}
		}
	}
}

// TestDirectMatchesPacked: with alpha 1, where the direct kernel reads op(A) in place (and
// B in place when it is not transposed), the product is bit-identical to the one from
// packed A and B, for A and B as stored and transposed, B's rows padded or not, with row
// counts that leave 0..mr-1 rows to a packed edge panel, column counts that leave an edge
// panel of B to pack, more than one block of rows (m > mc), depth beyond kc, enough rows
// and a wide enough B for the direct kernel to pack B (bInPlace), and every beta.
func TestDirectMatchesPacked(t *testing.T) {
	best := bestKernels()
	if best.direct == nil {
		t.Skip("no direct kernel on this processor")
	}
	packed := kernels{packed: best.packed}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tA := range transposes {
		for _, tB := range transposes {
			for _, padB := range []int{0, 3} {
				for _, s := range [][3]int{{6, 16, 1}, {11, 40, 37}, {36, 64, 128}, {mc + 7, 128, kc + 44}, {64, 64, 768}, {384, 64, 768}, {262, 150, 70}} {
					for _, beta := range betas {
						m, n, k := s[0], s[1], s[2]
						lda, rowA := k+1, m
						if tA != blas.NoTrans {
							lda, rowA = m+1, k
						}
						ldb, rowB := n+padB, k
						if tB != blas.NoTrans {
							ldb, rowB = k+padB, n
						}
						a, b, c0 := randSlice(rng, lda*rowA), randSlice(rng, ldb*rowB), randSlice(rng, m*n)
						want, got := append([]float32(nil), c0...), append([]float32(nil), c0...)
						gemm(packed, tA, tB, m, n, k, 1, a, lda, b, ldb, beta, want, n)
						gemm(best, tA, tB, m, n, k, 1, a, lda, b, ldb, beta, got, n)
						for i := range want {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("tA=%c tB=%c ldb=%d m=%d n=%d k=%d beta=%v: element %d is %v direct, %v packed", tA, tB, ldb, m, n, k, beta, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestScalars: every alpha and beta on one size with edge tiles in both directions.
func TestScalars(t *testing.T) {
	for name, kern := range kernelSets() {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			for _, tA := range transposes {
				for _, tB := range transposes {
					for _, alpha := range alphas {
						for _, beta := range betas {
							check(t, kern, product{tA, tB, 23, 37, 29, alpha, beta, 1, 3, 5}, rng)
						}
					}
				}
			}
		})
	}
}

// TestLarge: sizes beyond one cache block in every direction (k > kc so that beta is
// applied once and later blocks accumulate, m > mc, and n > nc), odd everywhere.
func TestLarge(t *testing.T) {
	sizes := [][3]int{{257, 131, 93}, {173, 45, 600}, {341, 83, 261}}
	if !testing.Short() {
		sizes = append(sizes, [3]int{7, nc + 21, 300})
	}
	for name, kern := range kernelSets() {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			for i, s := range sizes {
				for _, tA := range transposes {
					for _, tB := range transposes {
						check(t, kern, product{tA, tB, s[0], s[1], s[2], alphas[i%2], betas[i%3], i % 2, 1, 2}, rng)
					}
				}
			}
		})
	}
}

// TestConjTrans: ConjTrans is Trans for real matrices.
func TestConjTrans(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	check(t, bestKernels(), product{blas.ConjTrans, blas.ConjTrans, 9, 21, 11, 1, 0.3, 0, 0, 0}, rng)
}

// TestQuickReturns: alpha == 0 or k == 0 only scale C (zeroing it, NaN included, when
// beta == 0), and m == 0 or n == 0 touch nothing, even with empty slices.
func TestQuickReturns(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		k           int
		alpha, beta float32
		want        float32
	}{{0, 1, 0, 0}, {3, 0, 0, 0}, {0, 2, 0.5, 1}, {3, 0, 1, 2}, {0, 1, 1, 2}} {
		c := []float32{2, 2, nan, 2, 2, nan} // 2 x 2 with ldc 3: the NaNs are padding
		if tc.beta == 0 {
			c[0] = nan // ignored
		}
		a, b := make([]float32, 2*max(1, tc.k)), make([]float32, 2*max(1, tc.k))
		Sgemm(blas.NoTrans, blas.NoTrans, 2, 2, tc.k, tc.alpha, a, max(1, tc.k), b, 2, tc.beta, c, 3)
		for _, i := range []int{0, 1, 3, 4} {
			if c[i] != tc.want {
				t.Errorf("k=%d alpha=%g beta=%g: c[%d] = %v, want %v", tc.k, tc.alpha, tc.beta, i, c[i], tc.want)
			}
		}
		if !math.IsNaN(float64(c[2])) || !math.IsNaN(float64(c[5])) {
			t.Errorf("k=%d alpha=%g beta=%g: padding of C changed: %v", tc.k, tc.alpha, tc.beta, c)
		}
	}
	Sgemm(blas.NoTrans, blas.NoTrans, 0, 5, 5, 1, nil, 5, make([]float32, 25), 5, 0, nil, 5)
	Sgemm(blas.NoTrans, blas.NoTrans, 5, 0, 5, 1, make([]float32, 25), 5, nil, 1, 0, nil, 1)
}

// TestPanics: bad arguments panic with gonum's messages.
func TestPanics(t *testing.T) {
	s := make([]float32, 100)
	for _, tc := range []struct {
		want string
		call func()
	}{
		{badTranspose, func() { Sgemm('x', blas.NoTrans, 2, 2, 2, 1, s, 2, s, 2, 0, s, 2) }},
		{badTranspose, func() { Sgemm(blas.NoTrans, 'x', 2, 2, 2, 1, s, 2, s, 2, 0, s, 2) }},
		{mLT0, func() { Sgemm(blas.NoTrans, blas.NoTrans, -1, 2, 2, 1, s, 2, s, 2, 0, s, 2) }},
		{nLT0, func() { Sgemm(blas.NoTrans, blas.NoTrans, 2, -1, 2, 1, s, 2, s, 2, 0, s, 2) }},
		{kLT0, func() { Sgemm(blas.NoTrans, blas.NoTrans, 2, 2, -1, 1, s, 2, s, 2, 0, s, 2) }},
		{badLdA, func() { Sgemm(blas.NoTrans, blas.NoTrans, 2, 2, 3, 1, s, 2, s, 2, 0, s, 2) }},
		{badLdA, func() { Sgemm(blas.Trans, blas.NoTrans, 3, 2, 2, 1, s, 2, s, 2, 0, s, 2) }},
		{badLdB, func() { Sgemm(blas.NoTrans, blas.NoTrans, 2, 3, 2, 1, s, 2, s, 2, 0, s, 3) }},
		{badLdB, func() { Sgemm(blas.NoTrans, blas.Trans, 2, 2, 3, 1, s, 3, s, 2, 0, s, 2) }},
		{badLdC, func() { Sgemm(blas.NoTrans, blas.NoTrans, 2, 3, 2, 1, s, 2, s, 3, 0, s, 2) }},
		{shortA, func() { Sgemm(blas.NoTrans, blas.NoTrans, 2, 2, 2, 1, s[:3], 2, s, 2, 0, s, 2) }},
		{shortB, func() { Sgemm(blas.NoTrans, blas.NoTrans, 2, 2, 2, 1, s, 2, s[:3], 2, 0, s, 2) }},
		{shortC, func() { Sgemm(blas.NoTrans, blas.NoTrans, 2, 2, 2, 1, s, 2, s, 2, 0, s[:3], 2) }},
	} {
		func() {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, tc.want) {
					t.Errorf("panic %v, want %q", r, tc.want)
				}
			}()
			tc.call()
		}()
	}
}

// TestAllocs: a steady-state call allocates nothing.
func TestAllocs(t *testing.T) {
	const m, n, k = 50, 70, 300
	a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	if allocs := testing.AllocsPerRun(20, func() {
		Sgemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, k, b, k, 0.5, c, n)
	}); allocs > 0 {
		t.Errorf("%v allocations per call, want 0", allocs)
	}
}

// TestRowSplit: the product split by rows of C across goroutines, as lipformer/ops runs
// it, is bit-identical to the whole one (each element sums the same blocks of k in the
// same order), for every transpose combination.
func TestRowSplit(t *testing.T) {
	const m, n, k = 130, 200, 300
	rng := rand.New(rand.NewPCG(9, 10))
	split := splitRows(Sgemm)
	for _, tA := range transposes {
		for _, tB := range transposes {
			lda, ldb := k, n
			if tA != blas.NoTrans {
				lda = m
			}
			if tB != blas.NoTrans {
				ldb = k
			}
			a, b, c := randSlice(rng, m*k), randSlice(rng, k*n), randSlice(rng, m*n)
			want := append([]float32(nil), c...)
			Sgemm(tA, tB, m, n, k, 1.5, a, lda, b, ldb, 0.5, want, n)
			split(tA, tB, m, n, k, 1.5, a, lda, b, ldb, 0.5, c, n)
			for i := range want {
				if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
					t.Fatalf("tA=%c tB=%c: element %d is %v split, %v whole", tA, tB, i, c[i], want[i])
				}
			}
		}
	}
}
