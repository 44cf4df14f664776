package kernel

import (
	"runtime"

	"gonum.org/v1/gonum/blas"

	"lipformer/internal/sgemm"
)

// PackedWeights is a float32 matrix op(B), (k, n), packed once by internal/sgemm, so that
// GemmPacked applies it to new inputs without packing it again: for a decoder, whose
// weights multiply a few new rows at every step, packing would cost as much as the product.
type PackedWeights struct{ p *sgemm.PackedB }

// PackWeights packs op(B) = b, (k, n), or with transB its transpose for b (n, k); ldb is b's
// row stride. It returns nil where the processor has no sgemm assembly kernel, and callers
// then keep Gemm (gonum's or OpenBLAS's products).
func PackWeights(transB bool, k, n int, b []float32, ldb int) *PackedWeights {
	if !sgemm.Accelerated() {
		return nil
	}
	t := blas.NoTrans
	if transB {
		t = blas.Trans
	}
	return &PackedWeights{sgemm.PackB(t, k, n, b, ldb)}
}

// GemmPacked computes c = alpha a op(B) + beta c for a (m, k) with row stride lda and c
// (m, n) with row stride ldc, bit-identical to internal/sgemm's unpacked product. Large
// products are split by columns of c across GOMAXPROCS goroutines, which share the packed
// matrix (by columns rather than rows: a decoder's products have a few rows).
func GemmPacked(m int, alpha float32, a []float32, lda int, b *PackedWeights, beta float32, c []float32, ldc int) {
	k, n := b.p.Dims()
	panels := (n + sgemm.ColumnAlign - 1) / sgemm.ColumnAlign
	// split's threshold, with columns (micro-panels) instead of rows to share out
	if runtime.GOMAXPROCS(0) < 2 || m*n*k < minSplitFLOPs || panels < 2 {
		b.p.Gemm(blas.NoTrans, m, alpha, a, lda, beta, c, ldc)
		return
	}
	splitRows(panels, func(q0, q1 int) {
		b.p.GemmColumns(blas.NoTrans, m, alpha, a, lda, beta, c, ldc, q0*sgemm.ColumnAlign, min(n, q1*sgemm.ColumnAlign))
	})
}

// GemmPackedSerial is GemmPacked on the calling goroutine alone, for callers that already
// run one goroutine per core.
func GemmPackedSerial(m int, alpha float32, a []float32, lda int, b *PackedWeights, beta float32, c []float32, ldc int) {
	b.p.Gemm(blas.NoTrans, m, alpha, a, lda, beta, c, ldc)
}
