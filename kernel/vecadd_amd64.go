package kernel

// add32AVX2 writes y[i] = a[i] + b[i] for i < n, n a multiple of 8; y may be a or b.
//
//go:noescape
func add32AVX2(y, a, b *float32, n int)

// addVec adds the longest prefix of a and b that is a multiple of 8 floats into y, when the
// processor has the vector kernels, and returns its length (0 without them).
func addVec(y, a, b []float32) int {
	n := len(a) &^ 7
	if n == 0 || !vecKernels() {
		return 0
	}
	_, _ = y[n-1], b[n-1]
	add32AVX2(&y[0], &a[0], &b[0], n)
	return n
}
