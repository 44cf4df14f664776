package kernel

import (
	"math/bits"

	"lipformer/internal/sgemm"
)

// The AVX2/FMA kernels of fastmath_amd64.s, on raw pointers; n is a multiple of 8. The
// exponential and ELU kernels may write over their input. The
// GELU kernels take at most 512 floats (64 vectors) and return the mask of the vectors
// holding an input outside [-geluFastMax, geluFastMax] or NaN, left for the caller.

//go:noescape
func expNegAVX2(dst, src *float32, n int)

//go:noescape
func expShiftSumAVX2(dst, src *float32, n int, shift float32) float64

//go:noescape
func eluAVX2(y, x *float32, n int)

//go:noescape
func eluGradAVX2(dx, y, dy *float32, n int)

//go:noescape
func geluAVX2(y, x *float32, n int) (outside uint64)

//go:noescape
func geluGradAVX2(dx, x, dy *float32, n int) (outside uint64)

// vecBlock is the most floats a GELU kernel call takes: one bit of its mask per vector.
const vecBlock = 64 * 8

// vecKernels reports whether the processor runs the AVX2/FMA kernels: the same condition as
// internal/sgemm's assembly kernel.
func vecKernels() bool { return sgemm.Accelerated() }

// expNegVec computes expNeg32s on the longest prefix of src that is a multiple of 8 floats,
// when the processor has the kernels, and returns its length (0 without them).
func expNegVec(dst, src []float32) int {
	n := len(src) &^ 7
	if n == 0 || !vecKernels() {
		return 0
	}
	_ = dst[n-1]
	expNegAVX2(&dst[0], &src[0], n)
	return n
}

// expShiftSumVec sets dst = expNeg32(src - shift) on the longest prefix of src that is a
// multiple of 8 floats, when the processor has the kernels, and returns the float64 sum of
// those and the prefix's length (0, 0 without them).
func expShiftSumVec(dst, src []float32, shift float32) (float64, int) {
	n := len(src) &^ 7
	if n == 0 || !vecKernels() {
		return 0, 0
	}
	_ = dst[n-1]
	return expShiftSumAVX2(&dst[0], &src[0], n, shift), n
}

// eluVec computes elu32 on the longest prefix of x that is a multiple of 8 floats, when
// the processor has the kernels, and returns its length (0 without them).
func eluVec(y, x []float32) int {
	n := len(x) &^ 7
	if n == 0 || !vecKernels() {
		return 0
	}
	_ = y[n-1]
	eluAVX2(&y[0], &x[0], n)
	return n
}

// eluGradVec computes eluGrad32 on the longest prefix of y that is a multiple of 8 floats,
// when the processor has the kernels, and returns its length (0 without them).
func eluGradVec(dx, y, dy []float32) int {
	n := len(y) &^ 7
	if n == 0 || !vecKernels() {
		return 0
	}
	_, _ = dx[n-1], dy[n-1]
	eluGradAVX2(&dx[0], &y[0], &dy[0], n)
	return n
}

// geluVec computes gelu32 on the longest prefix of x that is a multiple of 8 floats, when
// the processor has the kernels, and returns its length (0 without them).
func geluVec(y, x []float32) int {
	n := len(x) &^ 7
	if n == 0 || !vecKernels() {
		return 0
	}
	for lo := 0; lo < n; lo += vecBlock {
		yb, xb := y[lo:min(lo+vecBlock, n)], x[lo:min(lo+vecBlock, n)]
		for out := geluAVX2(&yb[0], &xb[0], len(xb)); out != 0; out &= out - 1 {
			v := 8 * bits.TrailingZeros64(out)
			geluOutside(yb[v:v+8], xb[v:v+8])
		}
	}
	return n
}

// geluGradVec computes geluGrad32 on the longest prefix of x that is a multiple of 8
// floats, when the processor has the kernels, and returns its length (0 without them).
func geluGradVec(dx, x, dy []float32) int {
	n := len(x) &^ 7
	if n == 0 || !vecKernels() {
		return 0
	}
	for lo := 0; lo < n; lo += vecBlock {
		hi := min(lo+vecBlock, n)
		dxb, xb, dyb := dx[lo:hi], x[lo:hi], dy[lo:hi]
		for out := geluGradAVX2(&dxb[0], &xb[0], &dyb[0], len(xb)); out != 0; out &= out - 1 {
			v := 8 * bits.TrailingZeros64(out)
			geluGradOutside(dxb[v:v+8], xb[v:v+8], dyb[v:v+8])
		}
	}
	return n
}
