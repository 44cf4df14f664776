package sgemm

import "golang.org/x/sys/cpu"

// kernel6x16AVX512 and kernel6x16DirectAVX512 are the AVX-512 kernels of
// kernel_avx512_amd64.s: kernel6x16AVX2's and kernel6x16DirectAVX2's contracts and
// results, one ZMM register per row. They need AVX-512F.
//
//go:noescape
func kernel6x16AVX512(depth int, ap, bp, c *float32, ldc int, beta float32)

//go:noescape
func kernel6x16DirectAVX512(depth int, a *float32, rs, cs int, bp *float32, bs int, c *float32, ldc int, beta float32)

// kernel6x32DirectAVX512 is the wide AVX-512 direct kernel of kernel_avx512_amd64.s: the
// wide contract on raw pointers, rs, cs and bs in floats, c with row stride ldc floats.
// It needs AVX-512F.
//
//go:noescape
func kernel6x32DirectAVX512(depth int, a *float32, rs, cs int, bp0, bp1 *float32, bs int, c *float32, ldc int, beta float32)

// wideAVX512 is the wide AVX-512 direct kernel as a wide, with the slice bounds checked
// in Go.
func wideAVX512(depth int, a []float32, rs, cs int, bp0, bp1 []float32, bs int, c []float32, ldc int, beta float32) {
	_, _, _ = a[(mr-1)*rs+(depth-1)*cs], bp0[(depth-1)*bs+nr-1], bp1[(depth-1)*bs+nr-1]
	_ = c[(mr-1)*ldc+2*nr-1]
	kernel6x32DirectAVX512(depth, &a[0], rs, cs, &bp0[0], &bp1[0], bs, &c[0], ldc, beta)
}

// kernelAVX512 is the AVX-512 kernels as a kernel (avxKernel: edge tiles of up to 2 or 4
// rows with beta 0 still go to the short AVX2 kernels, which compute each row the same
// way).
func kernelAVX512(depth, rows int, ap, bp, c []float32, ldc int, beta float32) {
	avxKernel(kernel6x16AVX512, depth, rows, ap, bp, c, ldc, beta)
}

// directAVX512 is the AVX-512 direct kernel as a direct (avxDirect).
func directAVX512(depth int, a []float32, rs, cs int, bp []float32, bs int, c []float32, ldc int, beta float32) {
	avxDirect(kernel6x16DirectAVX512, depth, a, rs, cs, bp, bs, c, ldc, beta)
}

// hasAVX512 reports whether the processor (and the operating system) runs the AVX-512
// kernels.
func hasAVX512() bool { return cpu.X86.HasAVX512F && accelerated() }
