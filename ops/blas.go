package ops

import "gonum.org/v1/gonum/blas"

// blasImpl is a BLAS in both precisions, row-major as gonum defines it.
type blasImpl interface {
	blas.Float32
	blas.Float64
}

// gemm computes c = alpha * op(a) * op(b) + beta * c on row-major strided matrices, where
// op(a) is m x k, op(b) is k x n and c is m x n, with the BLAS of this build, large
// products in parallel.
func gemm[T Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	gemmWith(impl(), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemmSerial is gemm on the calling goroutine alone, for kernels that already run one
// job per core (the attention heads): splitting their products as well would only add
// goroutines.
func gemmSerial[T Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	gemmWith(serialImpl(), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemmWith is gemm with the BLAS bl.
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
