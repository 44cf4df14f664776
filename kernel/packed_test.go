package kernel

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGemmPacked: GemmSerial's products equal Gemm's to float32 rounding (OpenBLAS rounds a
// band of rows differently from the whole); products with packed weights, split by columns
// or not, equal Gemm's to rounding, for weights stored as they are applied and transposed,
// and GemmPackedSerial's equal GemmPacked's exactly. In the gonum build on a processor with
// the sgemm kernel, where Gemm is internal/sgemm's product, all four are bit-identical.
func TestGemmPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	packed := false
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
			want := make([]float32, m*n)
			for i := range want {
				want[i] = float32(i % 3)
			}
			pw := PackWeights(transB, k, n, b, ldb)
			exact := Backend == "gonum" && pw != nil // Gemm is internal/sgemm's product
			wantSerial, got, gotSerial := slices.Clone(want), slices.Clone(want), slices.Clone(want)
			Gemm(false, transB, m, n, k, 0.5, a, k, b, ldb, 2, want, n)
			GemmSerial(false, transB, m, n, k, 0.5, a, k, b, ldb, 2, wantSerial, n)
			for i := range want {
				if d := math.Abs(float64(wantSerial[i] - want[i])); d > 1e-5*(1+math.Abs(float64(want[i]))) || exact && wantSerial[i] != want[i] {
					t.Fatalf("transB %v, (%d, %d, %d): element %d is %v by GemmSerial, %v by Gemm", transB, m, n, k, i, wantSerial[i], want[i])
				}
			}
			if pw == nil {
				continue
			}
			packed = true
			GemmPacked(m, 0.5, a, k, pw, 2, got, n)
			GemmPackedSerial(m, 0.5, a, k, pw, 2, gotSerial, n)
			for i := range want {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*(1+math.Abs(float64(want[i]))) || exact && got[i] != want[i] {
					t.Fatalf("transB %v, (%d, %d, %d): element %d is %v packed, %v by Gemm (%s)", transB, m, n, k, i, got[i], want[i], Backend)
				}
				if gotSerial[i] != got[i] {
					t.Fatalf("transB %v, (%d, %d, %d): element %d is %v by GemmPackedSerial, %v by GemmPacked", transB, m, n, k, i, gotSerial[i], got[i])
				}
			}
		}
	}
	if !packed {
		t.Skip("no sgemm kernel on this processor: PackWeights returns nil, only GemmSerial is checked")
	}
}
