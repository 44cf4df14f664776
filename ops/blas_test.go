package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/gonum"
)

// TestSplitGemmMatchesSerial: the row-split product equals the BLAS's own, for every
// transpose combination, on a product large enough to be split.
func TestSplitGemmMatchesSerial(t *testing.T) {
	const m, n, k = 130, 96, 100
	rng := rand.New(rand.NewPCG(1, 1))
	fill := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			a, b, c0 := fill(m*k), fill(k*n), fill(m*n)
			lda, ldb := k, n
			if ta {
				lda = m
			}
			if tb {
				ldb = k
			}
			want := append([]float64(nil), c0...)
			got := append([]float64(nil), c0...)
			serial := gonum.Implementation{}
			serial.Dgemm(trans(ta), trans(tb), m, n, k, 1.5, a, lda, b, ldb, 0.5, want, n)
			splitGemm{serial}.Dgemm(trans(ta), trans(tb), m, n, k, 1.5, a, lda, b, ldb, 0.5, got, n)
			for i := range want {
				if math.Abs(got[i]-want[i]) > 1e-12 {
					t.Fatalf("transA=%t transB=%t: element %d is %v, want %v", ta, tb, i, got[i], want[i])
				}
			}
		}
	}
}

// BenchmarkGemm measures this build's BLAS on the largest product of a block step at
// GORGONIA.md's configuration: (2048, 256) x (256, 1024) in float32.
//
//	go test -run '^$' -bench Gemm ./ops; go test -tags openblas -run '^$' -bench Gemm ./ops
func BenchmarkGemm(b *testing.B) {
	const m, n, k = 2048, 1024, 256
	x, w, y := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for i := range x {
		x[i] = float32(i%7) * 0.1
	}
	for i := range w {
		w[i] = float32(i%5) * 0.1
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		gemm(false, false, m, n, k, 1, x, k, w, n, 0, y, n)
	}
	b.ReportMetric(2*m*n*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
