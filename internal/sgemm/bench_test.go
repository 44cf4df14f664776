package sgemm

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// benchShapes are the float32 products of a training step at the reference configurations
// P2 (768 rows of width 128) and P3 (2048 rows of width 256): the forward products
// X W, the input gradients dY W^T and the weight gradients X^T dY (at P2 also those of the
// invertible recipe's thin MLPs, 64 wide), and the per-head attention products of P2
// (context 64, head width 32) and P3 (context 256, head width 64): Q K^T, P V and P^T dO.
var benchShapes = []benchShape{
	{"P2-fwd-768x384x128", blas.NoTrans, blas.NoTrans, 768, 384, 128},
	{"P2-fwd-768x512x128", blas.NoTrans, blas.NoTrans, 768, 512, 128},
	{"P2-dX-768x128x512", blas.NoTrans, blas.Trans, 768, 128, 512},
	{"P2-dW-128x512x768", blas.Trans, blas.NoTrans, 128, 512, 768},
	{"P2-thin-fwd-768x64x128", blas.NoTrans, blas.NoTrans, 768, 64, 128},
	{"P2-thin-dX-768x128x64", blas.NoTrans, blas.Trans, 768, 128, 64},
	{"P2-thin-dW-128x64x768", blas.Trans, blas.NoTrans, 128, 64, 768},
	{"P3-fwd-2048x768x256", blas.NoTrans, blas.NoTrans, 2048, 768, 256},
	{"P3-fwd-2048x1024x256", blas.NoTrans, blas.NoTrans, 2048, 1024, 256},
	{"P3-fwd-1536x256x256", blas.NoTrans, blas.NoTrans, 1536, 256, 256},
	{"P3-dX-2048x256x1024", blas.NoTrans, blas.Trans, 2048, 256, 1024},
	{"P3-dW-256x256x2048", blas.Trans, blas.NoTrans, 256, 256, 2048},
	{"P3-dW-256x1024x2048", blas.Trans, blas.NoTrans, 256, 1024, 2048},
	{"P2-attn-QKt-64x64x32", blas.NoTrans, blas.Trans, 64, 64, 32},
	{"P2-attn-PV-64x32x64", blas.NoTrans, blas.NoTrans, 64, 32, 64},
	{"P2-attn-PtdO-64x32x64", blas.Trans, blas.NoTrans, 64, 32, 64},
	{"P3-attn-QKt-256x256x64", blas.NoTrans, blas.Trans, 256, 256, 64},
	{"P3-attn-PV-256x64x256", blas.NoTrans, blas.NoTrans, 256, 64, 256},
	{"P3-attn-PtdO-256x64x256", blas.Trans, blas.NoTrans, 256, 64, 256},
}

// operands are the matrices of the shape's product, filled with small repeating values:
// A and B as stored (op(A) m x k, op(B) k x n) with their leading dimensions, and C.
func (s benchShape) operands() (a, b, c []float32, lda, ldb int) {
	rowA, lda := s.m, s.k
	if s.tA != blas.NoTrans {
		rowA, lda = s.k, s.m
	}
	rowB, ldb := s.k, s.n
	if s.tB != blas.NoTrans {
		rowB, ldb = s.n, s.k
	}
	a, b, c = make([]float32, rowA*lda), make([]float32, rowB*ldb), make([]float32, s.m*s.n)
	for i := range a {
		a[i] = float32(i%7) * 0.1
	}
	for i := range b {
		b[i] = float32(i%5) * 0.1
	}
	return a, b, c, lda, ldb
}

// benchShape is a product of the benchmarks: op(A) m x k times op(B) k x n.
type benchShape struct {
	name    string
	tA, tB  blas.Transpose
	m, n, k int
}

// sgemmFunc is the signature of Sgemm.
type sgemmFunc func(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)

// splitRows runs f on GOMAXPROCS bands of the rows of C in parallel, as lipformer/ops's
// splitGemm does.
func splitRows(f sgemmFunc) sgemmFunc {
	return func(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		workers := runtime.GOMAXPROCS(0)
		band := (m + workers - 1) / workers
		var wg sync.WaitGroup
		for r0 := 0; r0 < m; r0 += band {
			wg.Add(1)
			go func(r0 int) {
				defer wg.Done()
				offA := r0 * lda
				if tA != blas.NoTrans {
					offA = r0
				}
				f(tA, tB, min(m, r0+band)-r0, n, k, alpha, a[offA:], lda, b, ldb, beta, c[r0*ldc:], ldc)
			}(r0)
		}
		wg.Wait()
	}
}

// goKernelSgemm is Sgemm with the portable micro-kernel, as it runs without AVX2.
func goKernelSgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemm(kernels{packed: kernelGo}, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// packedSgemm is Sgemm with A always packed, as it runs without a direct kernel.
func packedSgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemm(kernels{packed: bestKernels().packed}, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// BenchmarkSgemm compares this package with gonum on the shapes of a training step, in
// GFLOP/s: "serial" runs both (and this package with its portable kernel) with GOMAXPROCS 1; "parallel" runs this package under a
// row split across GOMAXPROCS goroutines (as lipformer/ops uses it) and gonum as it
// parallelises itself (as the default build used it before).
//
//	nice go test -run '^$' -bench Sgemm ./internal/sgemm
func BenchmarkSgemm(b *testing.B) {
	impls := []struct {
		name   string
		serial bool
		f      sgemmFunc
	}{
		{"serial/sgemm", true, Sgemm},
		{"serial/gonum", true, gonum.Implementation{}.Sgemm},
		{"serial/sgemm-gokernel", true, goKernelSgemm},
		{"serial/sgemm-packed", true, packedSgemm},
		{"parallel/sgemm-split", false, splitRows(Sgemm)},
		{"parallel/gonum", false, gonum.Implementation{}.Sgemm},
	}
	for _, s := range benchShapes {
		x, w, y, colA, colB := s.operands()
		for _, im := range impls {
			b.Run(fmt.Sprintf("%s/%s", s.name, im.name), func(b *testing.B) {
				if im.serial {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
				}
				for b.Loop() {
					im.f(s.tA, s.tB, s.m, s.n, s.k, 1, x, colA, w, colB, 0, y, s.n)
				}
				b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkPackedEdgeRows: a decoder lane's product, 30, 32 or 36 rows times a packed
// 256 x 1024 matrix, with the kernels as they are (a 32-row product ends in a 2-row tile,
// which the short AVX2 kernel computes) and with every tile computed as a full 6-row one,
// as before the short kernels. GFLOP/s counts the rows asked for.
//
//	go test -run '^$' -bench PackedEdgeRows ./internal/sgemm
func BenchmarkPackedEdgeRows(b *testing.B) {
	const k, n = 256, 1024
	w := make([]float32, k*n)
	for i := range w {
		w[i] = float32(i%5) * 0.1
	}
	p := PackB(blas.NoTrans, k, n, w, n)
	best := bestKernels().packed
	fullTiles := func(depth, _ int, ap, bp, c []float32, ldc int, beta float32) {
		best(depth, mr, ap, bp, c, ldc, beta)
	}
	for _, m := range []int{30, 32, 36} {
		x, y := make([]float32, m*k), make([]float32, m*n)
		for i := range x {
			x[i] = float32(i%7) * 0.1
		}
		for _, kern := range []struct {
			name string
			f    kernel
		}{{"kernels", best}, {"full-tiles", fullTiles}} {
			b.Run(fmt.Sprintf("rows=%d/%s", m, kern.name), func(b *testing.B) {
				for b.Loop() {
					p.gemmColumns(kernels{packed: kern.f}, blas.NoTrans, m, 1, x, k, 0, y, n, 0, n)
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
