//go:build !amd64

package sgemm

// bestKernel is the fastest micro-kernel of this architecture: the portable one.
func bestKernel() kernel { return kernelGo }

// accelerated is false: this architecture has no assembly kernel.
func accelerated() bool { return false }
