package kernel

// sum32AVX2 is the float64 sum of the n floats at x (n a multiple of 8).
//
//go:noescape
func sum32AVX2(x *float32, n int) float64

// sqDev32AVX2 is the float64 sum of (x[i] - mean)^2 over the n floats at x (n a multiple
// of 8).
//
//go:noescape
func sqDev32AVX2(x *float32, n int, mean float64) float64

// max32AVX2 is the largest of the n floats at x (n a multiple of 8, at least 8), unspecified
// with a NaN among them.
//
//go:noescape
func max32AVX2(x *float32, n int) float32

// sumVec returns the float64 sum of the longest prefix of x that is a multiple of 8
// floats and its length, when the processor has the vector kernels (0, 0 without them).
func sumVec(x []float32) (float64, int) {
	n := len(x) &^ 7
	if n == 0 || !vecKernels() {
		return 0, 0
	}
	return sum32AVX2(&x[0], n), n
}

// sqDevVec is sumVec for the squared deviations from mean.
func sqDevVec(x []float32, mean float64) (float64, int) {
	n := len(x) &^ 7
	if n == 0 || !vecKernels() {
		return 0, 0
	}
	return sqDev32AVX2(&x[0], n, mean), n
}

// maxVec returns the largest value of the longest prefix of x that is a multiple of 8
// floats and its length, when the processor has the vector kernels (0, 0 without them).
func maxVec(x []float32) (float32, int) {
	n := len(x) &^ 7
	if n == 0 || !vecKernels() {
		return 0, 0
	}
	return max32AVX2(&x[0], n), n
}
