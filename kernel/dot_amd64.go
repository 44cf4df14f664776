package kernel

// dotLanesAVX2 writes into s the four partial sums of Dot's main loop over the first n
// elements of a and b (n a multiple of 4, at least 4), bit for bit.
//
//go:noescape
func dotLanesAVX2(a, b *float32, n int, s *[4]float64)

// dotLanesVec computes Dot's four partial sums over the longest prefix of float32 a and b
// that is a multiple of 4, when the processor has the kernels, and returns the prefix's
// length (0, with s untouched, otherwise).
func dotLanesVec[T Float](a, b []T, s *[4]float64) int {
	a32, ok := any(a).([]float32)
	n := len(a) &^ 3
	if !ok || n == 0 || !vecKernels() {
		return 0
	}
	b32 := any(b).([]float32)
	_ = b32[n-1]
	dotLanesAVX2(&a32[0], &b32[0], n, s)
	return n
}
