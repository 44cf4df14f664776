//go:build !amd64

package sgemm

// bestKernels are the micro-kernels of this architecture: the portable packed one alone.
func bestKernels() kernels { return kernels{packed: kernelGo} }

// accelerated is false: this architecture has no assembly kernel.
func accelerated() bool { return false }
