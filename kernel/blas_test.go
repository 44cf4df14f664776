package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/gonum"
)

// TestSplitGemmMatchesSerial: the row-split product and the tiled one equal the BLAS's
// own, for every transpose combination, on a product large enough to be split and wider
// and taller than a tile.
func TestSplitGemmMatchesSerial(t *testing.T) {
	const m, n, k = 130, 200, 100
	rng := rand.New(rand.NewPCG(1, 1))
	fill := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	serial := gonum.Implementation{}
	for _, wrap := range []struct {
		name string
		impl blasImpl
	}{{"split", splitGemm{serial}}, {"tiles", serialTiles{serial}}} {
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
				got32 := make([]float32, len(c0))
				for i, v := range c0 {
					got32[i] = float32(v)
				}
				serial.Dgemm(trans(ta), trans(tb), m, n, k, 1.5, a, lda, b, ldb, 0.5, want, n)
				wrap.impl.Dgemm(trans(ta), trans(tb), m, n, k, 1.5, a, lda, b, ldb, 0.5, got, n)
				wrap.impl.Sgemm(trans(ta), trans(tb), m, n, k, 1.5, f32(a), lda, f32(b), ldb, 0.5, got32, n)
				for i := range want {
					if math.Abs(got[i]-want[i]) > 1e-12 {
						t.Fatalf("%s transA=%t transB=%t: element %d is %v, want %v", wrap.name, ta, tb, i, got[i], want[i])
					}
					if math.Abs(float64(got32[i])-want[i]) > 1e-3 {
						t.Fatalf("%s float32 transA=%t transB=%t: element %d is %v, want %v", wrap.name, ta, tb, i, got32[i], want[i])
					}
				}
			}
		}
	}
}

// f32 converts a slice to float32.
func f32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// BenchmarkGemm measures this build's BLAS on the largest product of a block step at
// docs/gorgonia.md's configuration: (2048, 256) x (256, 1024) in float32.
//
//	go test -run '^$' -bench Gemm ./kernel; go test -tags openblas -run '^$' -bench Gemm ./kernel
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
		Gemm(false, false, m, n, k, 1, x, k, w, n, 0, y, n)
	}
	b.ReportMetric(2*m*n*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
