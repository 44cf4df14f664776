package kernel

// scale32AVX2 writes y[i] = s * x[i] for i < n, n a multiple of 8; y may be x.
//
//go:noescape
func scale32AVX2(y, x *float32, s float32, n int)

// scaleWide32AVX2 writes y[i] = float32(float64(x[i]) * f) for i < n, n a multiple of 8;
// y may be x.
//
//go:noescape
func scaleWide32AVX2(y, x *float32, f float64, n int)

// scaleDiffWide32AVX2 writes y[i] = s * (d[i] - float32(float64(v[i]) * f)) for i < n, n a
// multiple of 8.
//
//go:noescape
func scaleDiffWide32AVX2(y, d, v *float32, f float64, s float32, n int)

// subScaled32AVX2 writes y[i] -= f * x[i] for i < n, n a multiple of 8.
//
//go:noescape
func subScaled32AVX2(y, x *float32, f float32, n int)

// scaleVec scales the longest prefix of x that is a multiple of 8 floats into y, when the
// processor has the vector kernels, and returns its length (0 without them).
func scaleVec(y, x []float32, s float32) int {
	n := len(x) &^ 7
	if n == 0 || !vecKernels() {
		return 0
	}
	_ = y[n-1]
	scale32AVX2(&y[0], &x[0], s, n)
	return n
}

// scaleWideVec is scaleVec for ScaleWide's float64 factor.
func scaleWideVec(y, x []float32, f float64) int {
	n := len(x) &^ 7
	if n == 0 || !vecKernels() {
		return 0
	}
	_ = y[n-1]
	scaleWide32AVX2(&y[0], &x[0], f, n)
	return n
}

// subScaledVec is SubScaled on the longest prefix of x that is a multiple of 8 floats,
// when the processor has the vector kernels; it returns its length (0 without them).
func subScaledVec(y, x []float32, f float32) int {
	n := len(x) &^ 7
	if n == 0 || !vecKernels() {
		return 0
	}
	_ = y[n-1]
	subScaled32AVX2(&y[0], &x[0], f, n)
	return n
}

// scaleDiffWideVec computes ScaleDiffWide on the longest prefix of v that is a multiple of
// 8 floats, when the processor has the vector kernels, and returns its length (0 without
// them).
func scaleDiffWideVec(y, g, v []float32, f float64, s float32) int {
	n := len(v) &^ 7
	if n == 0 || !vecKernels() {
		return 0
	}
	_, _ = y[n-1], g[n-1]
	scaleDiffWide32AVX2(&y[0], &g[0], &v[0], f, s, n)
	return n
}
