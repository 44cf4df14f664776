//go:build !amd64

package sgemm

// addAVX2 adds nothing: this architecture has no assembly kernels.
func addAVX2(map[string]kernels) {}
