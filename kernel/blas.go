package kernel

import "gonum.org/v1/gonum/blas"

// BLAS is a complete BLAS in the four precisions, row-major as gonum defines it: what
// Gorgonia's Use takes.
type BLAS interface {
	blas.Float32
	blas.Float64
	blas.Complex64
	blas.Complex128
}

// blasImpl is a BLAS in both real precisions.
type blasImpl interface {
	blas.Float32
	blas.Float64
}

// Gemm computes c = alpha op(a) op(b) + beta c on row-major strided matrices, op(a) m x k,
// op(b) k x n and c m x n (op transposes when transA or transB), with the BLAS of this
// build (Backend), large products in parallel.
func Gemm[T Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	gemmWith(impl(), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// GemmSerial is Gemm on the calling goroutine alone, for callers that already run one job
// per core. Its results equal Gemm's up to the rounding of the products' sums (OpenBLAS
// rounds a band of rows differently from the whole).
func GemmSerial[T Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	gemmWith(serialImpl(), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// GemmBand is the height of the bands of rows of C in which Gemm computes an (m, k) x (k,
// n) product of T, one goroutine each: m when it does not cut the product into bands (a
// small product, or a BLAS that parallelises products by itself: gonum's in float64).
// Gemm on a band equals GemmSerial on it, so a caller that runs a band's work on one
// goroutine may use GemmSerial there and still compute Gemm's values bit for bit.
func GemmBand[T Float](m, n, k int) int {
	if !splitsRows[T]() || !split(m, n, k) {
		return m
	}
	return bandHeight(m)
}

// GemmInBands computes what Gemm computes, bit for bit in every build: Gemm itself when
// it does not cut the product into bands, otherwise its bands (GemmBand) one after the
// other on the calling goroutine, where GemmSerial's single product may round differently
// (OpenBLAS, and gonum's float64 product).
func GemmInBands[T Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	band := GemmBand[T](m, n, k)
	if band >= m {
		Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	for r0 := 0; r0 < m; r0 += band {
		r1 := min(m, r0+band)
		GemmSerial(transA, transB, r1-r0, n, k, alpha, a[rowOffset(trans(transA), r0, lda):], lda, b, ldb, beta, c[r0*ldc:], ldc)
	}
}

// Gemv computes y = alpha op(a) x + beta y for a row-major m x n matrix a (stride lda),
// op(a) = a^T when transA, with the BLAS of this build on the calling goroutine.
func Gemv[T Float](transA bool, m, n int, alpha T, a []T, lda int, x []T, beta T, y []T) {
	bl, t := serialImpl(), trans(transA)
	switch a := any(a).(type) {
	case []float32:
		bl.Sgemv(t, m, n, float32(alpha), a, lda, any(x).([]float32), 1, float32(beta), any(y).([]float32), 1)
	case []float64:
		bl.Dgemv(t, m, n, float64(alpha), a, lda, any(x).([]float64), 1, float64(beta), any(y).([]float64), 1)
	}
}

// gemmWith is Gemm with the BLAS bl.
func gemmWith[T Float](bl blasImpl, transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	ta, tb := trans(transA), trans(transB)
	switch a := any(a).(type) {
	case []float32:
		bl.Sgemm(ta, tb, m, n, k, float32(alpha), a, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		bl.Dgemm(ta, tb, m, n, k, float64(alpha), a, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}

// trans maps a flag to a BLAS transpose.
func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}
