package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestMulVec64 checks MulVec64 and MulTVecAdd64 against plain float64 sums of the same
// products, in float32 (the assembly where the processor has it, for column counts that
// are a multiple of 4) and float64 (the portable loops), MulVec64 with float64 and float32
// vectors, on rows around the kernels'
// groups of four, columns around their blocks of four and sixteen, and a row stride
// wider than the rows: each result within n 2^-52 times the sum of its terms' magnitudes,
// nothing written outside y.
func TestMulVec64(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, m := range []int{1, 2, 3, 4, 5, 7, 8, 9, 64, 129} {
		for _, n := range []int{0, 1, 3, 4, 8, 12, 16, 20, 28, 32, 36, 64, 128} {
			for _, lda := range []int{n, n + 5} {
				a64, a32 := randomRows(rng, max(1, m*lda))
				x, x32 := randomRows(rng, n)
				u, _ := randomRows(rng, m)
				y0, _ := randomRows(rng, n+2)
				name := fmt.Sprintf("m %d n %d lda %d", m, n, lda)
				checkMulVec64(t, "float32 "+name, a32, a64, m, n, lda, x, u, y0)
				checkMulVec64(t, "float64 "+name, a64, a64, m, n, lda, x, u, y0)
				checkMulVec64(t, "float32, float32 x, "+name, a32, a64, m, n, lda, x32, u, y0)
				checkMulVec64(t, "float64, float32 x, "+name, a64, a64, m, n, lda, x32, u, y0)
			}
		}
	}
}

// checkMulVec64 runs both products on a (m, n) of stride lda, whose values are ref, and
// compares them with plain sums; MulVec64 multiplies by x (n), MulTVecAdd64 by u (m).
func checkMulVec64[T, U Float](t *testing.T, name string, a []T, ref []float64, m, n, lda int, x []U, u, y0 []float64) {
	t.Helper()
	y := make([]float64, m+2)
	y[0], y[m+1] = 7, 7
	MulVec64(y[1:m+1], a, lda, x)
	if y[0] != 7 || y[m+1] != 7 {
		t.Fatalf("%s: MulVec64 wrote outside its rows", name)
	}
	for i := range m {
		var want, mag float64
		for j := range n {
			want += ref[i*lda+j] * float64(x[j])
			mag += math.Abs(ref[i*lda+j] * float64(x[j]))
		}
		if e := math.Abs(y[i+1] - want); e > float64(n)*0x1p-52*mag {
			t.Fatalf("%s: MulVec64 row %d: %v, want %v (error %.3g)", name, i, y[i+1], want, e)
		}
	}
	z := make([]float64, n+2)
	copy(z, y0)
	MulTVecAdd64(z[1:n+1], a, lda, u)
	if z[0] != y0[0] || z[n+1] != y0[n+1] {
		t.Fatalf("%s: MulTVecAdd64 wrote outside its columns", name)
	}
	for j := range n {
		want, mag := y0[j+1], math.Abs(y0[j+1])
		for i := range m {
			want += u[i] * ref[i*lda+j]
			mag += math.Abs(u[i] * ref[i*lda+j])
		}
		if e := math.Abs(z[j+1] - want); e > float64(m+1)*0x1p-52*mag {
			t.Fatalf("%s: MulTVecAdd64 column %d: %v, want %v (error %.3g)", name, j, z[j+1], want, e)
		}
	}
}
