package ops

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGemmPacked: products with packed weights, split by columns or not, equal Gemm's to
// float32 rounding, for weights stored as they are applied and transposed;
// GemmPackedSerial's equal GemmPacked's exactly, and GemmSerial's Gemm's to rounding (OpenBLAS
// rounds a band of rows differently from the whole).
func TestGemmPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, transB := range []bool{false, true} {
		for _, sz := range [][3]int{{1, 5, 3}, {16, 768, 256}, {7, 100, 33}} {
			m, n, k := sz[0], sz[1], sz[2]
			a, b := make([]float32, m*k), make([]float32, k*n)
			for i := range a {
				a[i] = float32(rng.NormFloat64())
			}
			for i := range b {
				b[i] = float32(rng.NormFloat64())
			}
			ldb := n
			if transB {
				ldb = k
			}
			pw := PackWeights(transB, k, n, b, ldb)
			if pw == nil {
				t.Skip("no sgemm kernel on this processor: PackWeights returns nil")
			}
			want, got := make([]float32, m*n), make([]float32, m*n)
			for i := range want {
				want[i] = float32(i % 3)
				got[i] = want[i]
			}
			wantSerial, gotSerial := slices.Clone(want), slices.Clone(got)
			Gemm(false, transB, m, n, k, 0.5, a, k, b, ldb, 2, want, n)
			GemmPacked(m, 0.5, a, k, pw, 2, got, n)
			GemmSerial(false, transB, m, n, k, 0.5, a, k, b, ldb, 2, wantSerial, n)
			GemmPackedSerial(m, 0.5, a, k, pw, 2, gotSerial, n)
			for i := range want {
				tol := 1e-5 * (1 + math.Abs(float64(want[i])))
				if d := math.Abs(float64(got[i] - want[i])); d > tol {
					t.Fatalf("transB %v, (%d, %d, %d): element %d is %v packed, %v by Gemm", transB, m, n, k, i, got[i], want[i])
				}
				if d := math.Abs(float64(wantSerial[i] - want[i])); d > tol {
					t.Fatalf("transB %v, (%d, %d, %d): element %d is %v by GemmSerial, %v by Gemm", transB, m, n, k, i, wantSerial[i], want[i])
				}
				if gotSerial[i] != got[i] {
					t.Fatalf("transB %v, (%d, %d, %d): element %d is %v by GemmPackedSerial, %v by GemmPacked", transB, m, n, k, i, gotSerial[i], got[i])
				}
			}
		}
	}
}
