package sgemm

import "golang.org/x/sys/cpu"

// kernel6x16AVX2 is the AVX2 micro-kernel of kernel_amd64.s: the kernel contract on raw
// pointers, c with row stride ldc floats. It needs AVX2 and FMA.
//
//go:noescape
func kernel6x16AVX2(depth int, ap, bp, c *float32, ldc int, beta float32)

// kernelAVX2 is kernel6x16AVX2 as a kernel, with the slice bounds checked in Go.
func kernelAVX2(depth int, ap, bp, c []float32, ldc int, beta float32) {
	_, _ = ap[depth*mr-1], bp[depth*nr-1]
	_ = c[(mr-1)*ldc+nr-1]
	kernel6x16AVX2(depth, &ap[0], &bp[0], &c[0], ldc, beta)
}

// bestKernel is the fastest micro-kernel this processor runs: the AVX2 one if it has AVX2
// and FMA (and the operating system saves the YMM registers), else the portable one.
func bestKernel() kernel {
	if accelerated() {
		return kernelAVX2
	}
	return kernelGo
}

// accelerated reports whether the processor runs the AVX2 kernel.
func accelerated() bool { return cpu.X86.HasAVX2 && cpu.X86.HasFMA }
