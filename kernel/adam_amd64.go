package kernel

// adam32AVX2 is AdamUpdate's loop on n elements of the parameter x and its gradient dx, n
// a multiple of 8.
//
//go:noescape
func adam32AVX2(x, dx, m, v *float32, n int, s *AdamStep[float32])

// adamVec updates the longest prefix of p that is a multiple of 8 floats, when the
// processor has the vector kernels, and returns its length (0 without them).
func adamVec(p, g, m, v []float32, s *AdamStep[float32]) int {
	n := len(p) &^ 7
	if n == 0 || !vecKernels() {
		return 0
	}
	_, _, _ = g[n-1], m[n-1], v[n-1]
	adam32AVX2(&p[0], &g[0], &m[0], &v[0], n, s)
	return n
}
