//go:build !openblas

package kernel

import (
	"lipformer/internal/sgemm"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Backend names the BLAS this build uses: "gonum" by default (pure Go, with
// internal/sgemm's float32 products on processors with AVX2 and FMA), "openblas" with the
// build tag openblas.
const Backend = "gonum"

// GraphBLAS returns the BLAS Gorgonia's own matrix products should use in this build, and
// false when it is Gorgonia's default (gonum), as in this build.
func GraphBLAS() (BLAS, bool) { return nil, false }

// goBLAS is gonum's BLAS with the float32 matrix product replaced by internal/sgemm's
// packed, register-tiled one (AVX2 assembly where the processor has it), several times
// faster than gonum's. It runs each product on the calling goroutine.
type goBLAS struct{ gonum.Implementation }

// Sgemm is Gemm in float32, by internal/sgemm.
func (goBLAS) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemm.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// parallelBLAS is the BLAS of impl: float32 products are split by rows of C across
// GOMAXPROCS goroutines (splitGemm over the single-threaded internal/sgemm, each band
// packing its own panels); everything else, float64 products included, is gonum's, which
// parallelises large products itself.
type parallelBLAS struct{ goBLAS }

// Sgemm is Gemm in float32, split across GOMAXPROCS goroutines.
func (p parallelBLAS) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	splitGemm{p.goBLAS}.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// serialBLAS is the BLAS of serialImpl: internal/sgemm in float32, which never leaves the
// calling goroutine, and gonum on tiles too small for it to parallelise in float64.
type serialBLAS struct{ serialTiles }

// Sgemm is Gemm in float32, by internal/sgemm on the calling goroutine.
func (serialBLAS) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemm.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// impl is the BLAS of this build: with internal/sgemm's float32 product where it has an
// assembly kernel for this processor, gonum's alone where it has not.
func impl() blasImpl {
	if sgemm.Accelerated() {
		return parallelBLAS{}
	}
	return gonum.Implementation{}
}

// splitsRows reports whether impl cuts products of T into bands of rows (splitGemm):
// internal/sgemm's float32 products; gonum's float64 ones parallelise by themselves.
func splitsRows[T Float]() bool {
	var z T
	_, f32 := any(z).(float32)
	return f32 && sgemm.Accelerated()
}

// serialImpl is the BLAS of this build for products that must stay on the calling
// goroutine, with internal/sgemm's float32 product where impl has it.
func serialImpl() blasImpl {
	if sgemm.Accelerated() {
		return serialBLAS{serialTiles{gonum.Implementation{}}}
	}
	return serialTiles{gonum.Implementation{}}
}
