package kernel

import (
	"runtime"

	"gonum.org/v1/gonum/blas"
)

// splitGemm wraps a single-threaded BLAS and computes large matrix products in parallel:
// the rows of C are split into GOMAXPROCS bands, one goroutine each.
type splitGemm struct{ BLAS }

// minSplitFLOPs is the smallest product (m*n*k) worth splitting across goroutines.
const minSplitFLOPs = 1 << 20

// Sgemm is Gemm in float32.
func (s splitGemm) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if !split(m, n, k) { // called directly: no closure is allocated for small products
		s.BLAS.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	splitRows(m, func(r0, r1 int) {
		s.BLAS.Sgemm(tA, tB, r1-r0, n, k, alpha, a[rowOffset(tA, r0, lda):], lda, b, ldb, beta, c[r0*ldc:], ldc)
	})
}

// Dgemm is Gemm in float64.
func (s splitGemm) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if !split(m, n, k) {
		s.BLAS.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	splitRows(m, func(r0, r1 int) {
		s.BLAS.Dgemm(tA, tB, r1-r0, n, k, alpha, a[rowOffset(tA, r0, lda):], lda, b, ldb, beta, c[r0*ldc:], ldc)
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

// split reports whether an (m, k) x (k, n) product is large enough, and has enough rows,
// to be split across GOMAXPROCS goroutines.
func split(m, n, k int) bool {
	workers := runtime.GOMAXPROCS(0)
	return workers >= 2 && m >= 2*workers && m*n*k >= minSplitFLOPs
}

// bandHeight is the rows of each of the GOMAXPROCS bands that a split product's m rows are
// cut into (the last may have fewer).
func bandHeight(m int) int {
	workers := runtime.GOMAXPROCS(0)
	return (m + workers - 1) / workers
}

// splitRows calls f on GOMAXPROCS bands [r0, r1) covering the m rows, in parallel.
func splitRows(m int, f func(r0, r1 int)) {
	band := bandHeight(m)
	Parallel((m+band-1)/band, func(i int) { f(i*band, min(m, (i+1)*band)) })
}

// serialTiles wraps a BLAS that parallelises products by itself (gonum runs every product
// of at least four 64 x 64 blocks of C on several goroutines) and keeps each product on the
// calling goroutine by handing it tiles of C of at most tileRows x tileCols, too small to
// be split.
type serialTiles struct{ BLAS }

// tileRows and tileCols bound the tiles of C that serialTiles passes on: one 64-row block
// by three 64-column blocks, below gonum's four-block threshold.
const tileRows, tileCols = 64, 192

// Sgemm is Gemm in float32.
func (s serialTiles) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for r0 := 0; r0 < m; r0 += tileRows {
		for c0 := 0; c0 < n; c0 += tileCols {
			s.BLAS.Sgemm(tA, tB, min(tileRows, m-r0), min(tileCols, n-c0), k, alpha, a[rowOffset(tA, r0, lda):], lda, b[colOffset(tB, c0, ldb):], ldb, beta, c[r0*ldc+c0:], ldc)
		}
	}
}

// Dgemm is Gemm in float64.
func (s serialTiles) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	for r0 := 0; r0 < m; r0 += tileRows {
		for c0 := 0; c0 < n; c0 += tileCols {
			s.BLAS.Dgemm(tA, tB, min(tileRows, m-r0), min(tileCols, n-c0), k, alpha, a[rowOffset(tA, r0, lda):], lda, b[colOffset(tB, c0, ldb):], ldb, beta, c[r0*ldc+c0:], ldc)
		}
	}
}

// colOffset is where column c0 of op(B) starts in B's storage: column c0 of B, or row c0
// when B is transposed.
func colOffset(t blas.Transpose, c0, ldb int) int {
	if t == blas.NoTrans {
		return c0
	}
	return c0 * ldb
}
