package ops

// The kernels of this package's ops on plain row-major slices, for code that computes
// outside a graph what the ops compute inside one (model's incremental decoder): the same
// functions, so that both give the same values up to the order of the products' sums
// (GemmSerial's bands of rows round as Gemm's whole in gonum, not always in OpenBLAS).

// Gemm computes c = alpha op(a) op(b) + beta c on row-major strided matrices, op(a) m x k,
// op(b) k x n and c m x n (transposed when transA or transB), with the BLAS of this build,
// large products in parallel: the products of Linear and Attention.
func Gemm[T Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// GemmSerial is Gemm on the calling goroutine alone, for callers that already run one
// goroutine per core.
func GemmSerial[T Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	gemmSerial(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// LayerNormRows writes the LayerNorm of every row of x (width len(gamma)) into y, as the
// LayerNorm op. y may be x.
func LayerNormRows[T Float](y, x, gamma, beta []T, eps float64) {
	layerNormKernel(y, x, gamma, beta, eps)
}

// GELUInto writes y = GELU(x) elementwise, as the GELU op (its float32 kernels in
// float32). y must not overlap x.
func GELUInto[T Float](y, x []T) {
	pointwiseKernel(geluFn(), y, x, nil)
}

// ELUInto writes y = ELU(x) elementwise, as the ELU op. y must not overlap x.
func ELUInto[T Float](y, x []T) {
	pointwiseKernel(eluFn(), y, x, nil)
}

// SoftmaxRow writes the softmax of x[:keep] into y[:keep] and zeros into y[keep:], as one
// row of the Softmax and Attention ops. y may be x.
func SoftmaxRow[T Float](y, x []T, keep int) { softmaxRow(y, x, keep) }

// SquaredNorms writes into n the squared norms of the len(n) rows (stride ld, width d) of
// x, as the L2 attention logits use them.
func SquaredNorms[T Float](n, x []T, ld, d int) { sqNorms(n, x, ld, d) }

// Gemv computes y = alpha op(a) x + beta y for a row-major m x n matrix a (stride lda),
// op(a) = a^T when transA, with the BLAS of this build on the calling goroutine: a product
// of one row by a matrix (x a = a^T x) reads a once, where Gemm would first pack it.
func Gemv[T Float](transA bool, m, n int, alpha T, a []T, lda int, x []T, beta T, y []T) {
	bl, t := serialImpl(), trans(transA)
	switch a := any(a).(type) {
	case []float32:
		bl.Sgemv(t, m, n, float32(alpha), a, lda, any(x).([]float32), 1, float32(beta), any(y).([]float32), 1)
	case []float64:
		bl.Dgemv(t, m, n, float64(alpha), a, lda, any(x).([]float64), 1, float64(beta), any(y).([]float64), 1)
	}
}
