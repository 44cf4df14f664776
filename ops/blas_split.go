package ops

import (
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
)

// fullBLAS is a complete BLAS, as Gorgonia's Use takes it.
type fullBLAS interface {
	blas.Float32
	blas.Float64
	blas.Complex64
	blas.Complex128
}

// splitGemm wraps a single-threaded BLAS and computes large matrix products in parallel:
// the rows of C are split into GOMAXPROCS bands, one goroutine each.
type splitGemm struct{ fullBLAS }

// minSplitFLOPs is the smallest product (m*n*k) worth splitting across goroutines.
const minSplitFLOPs = 1 << 20

// Sgemm is Gemm in float32.
func (s splitGemm) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	splitRows(m, n, k, func(r0, r1 int) {
		s.fullBLAS.Sgemm(tA, tB, r1-r0, n, k, alpha, a[rowOffset(tA, r0, lda):], lda, b, ldb, beta, c[r0*ldc:], ldc)
	})
}

// Dgemm is Gemm in float64.
func (s splitGemm) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	splitRows(m, n, k, func(r0, r1 int) {
		s.fullBLAS.Dgemm(tA, tB, r1-r0, n, k, alpha, a[rowOffset(tA, r0, lda):], lda, b, ldb, beta, c[r0*ldc:], ldc)
	})
}

// rowOffset is where row r0 of op(A) starts in A's storage: row r0 of A, or column r0
// when A is transposed.
func rowOffset(t blas.Transpose, r0, lda int) int {
	if t == blas.NoTrans {
		return r0 * lda
	}
	return r0
}

// splitRows calls f on bands [r0, r1) covering the m rows, in parallel when the product
// is large enough, and once for all rows otherwise.
func splitRows(m, n, k int, f func(r0, r1 int)) {
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 || m < 2*workers || m*n*k < minSplitFLOPs {
		f(0, m)
		return
	}
	band := (m + workers - 1) / workers
	var wg sync.WaitGroup
	for r0 := 0; r0 < m; r0 += band {
		wg.Add(1)
		go func(r0 int) {
			defer wg.Done()
			f(r0, min(m, r0+band))
		}(r0)
	}
	wg.Wait()
}
