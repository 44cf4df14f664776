package sgemm

import "golang.org/x/sys/cpu"

// kernel6x16AVX2 is the AVX2 micro-kernel of kernel_amd64.s: the kernel contract on raw
// pointers, c with row stride ldc floats. It needs AVX2 and FMA.
//
//go:noescape
func kernel6x16AVX2(depth int, ap, bp, c *float32, ldc int, beta float32)

// kernel2x16AVX2 and kernel4x16AVX2 are kernel6x16AVX2 for the first 2 or 4 rows of the
// tile, with beta 0: each row is computed as kernel6x16AVX2 computes it.
//
//go:noescape
func kernel2x16AVX2(depth int, ap, bp, c *float32, ldc int)

//go:noescape
func kernel4x16AVX2(depth int, ap, bp, c *float32, ldc int)

// kernel6x16DirectAVX2 is the AVX2 direct kernel of kernel_amd64.s: the direct contract
// on raw pointers, rs, cs and bs in floats, c with row stride ldc floats. It needs AVX2
// and FMA.
//
//go:noescape
func kernel6x16DirectAVX2(depth int, a *float32, rs, cs int, bp *float32, bs int, c *float32, ldc int, beta float32)

// directAVX2 is the AVX2 direct kernel as a direct (avxDirect).
func directAVX2(depth int, a []float32, rs, cs int, bp []float32, bs int, c []float32, ldc int, beta float32) {
	avxDirect(kernel6x16DirectAVX2, depth, a, rs, cs, bp, bs, c, ldc, beta)
}

// kernelAVX2 is the AVX2 kernels as a kernel (avxKernel).
func kernelAVX2(depth, rows int, ap, bp, c []float32, ldc int, beta float32) {
	avxKernel(kernel6x16AVX2, depth, rows, ap, bp, c, ldc, beta)
}

// tile6x16 and direct6x16 are the assembly 6 x 16 kernels, packed and direct, of one
// instruction set: kernel6x16AVX2 and kernel6x16DirectAVX2, or their AVX-512 forms.
type (
	tile6x16   func(depth int, ap, bp, c *float32, ldc int, beta float32)
	direct6x16 func(depth int, a *float32, rs, cs int, bp *float32, bs int, c *float32, ldc int, beta float32)
)

// avxKernel is the kernel contract on six, with the slice bounds checked in Go: a tile of
// up to 2 or 4 rows with beta 0 (macro's edge tiles, computed into its tile buffer) goes
// to a short AVX2 kernel, which skips the padding rows of packed A (the last tile of 32
// rows, as in a lane of a 64-sequence decoder step, has 2) and computes each row as six
// does.
func avxKernel(six tile6x16, depth, rows int, ap, bp, c []float32, ldc int, beta float32) {
	_, _ = ap[depth*mr-1], bp[depth*nr-1]
	_ = c[(mr-1)*ldc+nr-1]
	switch {
	case rows <= 2 && beta == 0:
		kernel2x16AVX2(depth, &ap[0], &bp[0], &c[0], ldc)
	case rows <= 4 && beta == 0:
		kernel4x16AVX2(depth, &ap[0], &bp[0], &c[0], ldc)
	default:
		six(depth, &ap[0], &bp[0], &c[0], ldc, beta)
	}
}

// avxDirect is the direct contract on six, with the slice bounds checked in Go.
func avxDirect(six direct6x16, depth int, a []float32, rs, cs int, bp []float32, bs int, c []float32, ldc int, beta float32) {
	_, _ = a[(mr-1)*rs+(depth-1)*cs], bp[(depth-1)*bs+nr-1]
	_ = c[(mr-1)*ldc+nr-1]
	six(depth, &a[0], rs, cs, &bp[0], bs, &c[0], ldc, beta)
}

// bestKernels are the fastest micro-kernels this processor runs: the AVX-512 ones, the
// wide 6 x 32 one included, if it has AVX-512F (1.3-1.45 times the AVX2 ones' GFLOP/s on a
// core of an AMD EPYC of the Turin generation: BenchmarkKernelSets; the wide kernel
// 1.2-1.5 times the 6 x 16 one's on an Intel Xeon, docs/performance.md), else the AVX2
// ones if it has AVX2 and FMA (and the operating system saves the YMM registers), else the
// portable packed one alone. All give the same results, bit for bit.
func bestKernels() kernels {
	if hasAVX512() {
		return kernels{packed: kernelAVX512, direct: directAVX512, wide: wideAVX512}
	}
	if accelerated() {
		return kernels{packed: kernelAVX2, direct: directAVX2}
	}
	return kernels{packed: kernelGo}
}

// accelerated reports whether the processor runs the AVX2 kernel.
func accelerated() bool { return cpu.X86.HasAVX2 && cpu.X86.HasFMA }
