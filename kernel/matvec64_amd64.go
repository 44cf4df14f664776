package kernel

// The AVX2/FMA kernels of matvec64_amd64.s, on raw pointers; n is a multiple of 4, m and
// n at least 1.

// mulVec64AVX2 writes y_i = a_i . x for the m rows of a (stride lda floats), n columns.
//
//go:noescape
func mulVec64AVX2(y *float64, a *float32, x *float64, m, n, lda int)

// mulVec64x32AVX2 is mulVec64AVX2 for a float32 x.
//
//go:noescape
func mulVec64x32AVX2(y *float64, a *float32, x *float32, m, n, lda int)

// mulTVecAdd64AVX2 adds y_j += sum_{i < m} x_i a_ij for the n columns j of y.
//
//go:noescape
func mulTVecAdd64AVX2(y *float64, a *float32, x *float64, m, n, lda int)

// mulVecVec computes MulVec64 (y not empty) and reports true when a is float32, the
// columns a multiple of 4 and the processor has the kernels; else it does nothing and
// reports false.
func mulVecVec[T, U Float](y []float64, a []T, lda int, x []U) bool {
	a32, ok := any(a).([]float32)
	if !ok || len(x) == 0 || len(x)%4 != 0 || !vecKernels() {
		return false
	}
	switch x := any(x).(type) {
	case []float64:
		mulVec64AVX2(&y[0], &a32[0], &x[0], len(y), len(x), lda)
	case []float32:
		mulVec64x32AVX2(&y[0], &a32[0], &x[0], len(y), len(x), lda)
	}
	return true
}

// mulTVecAddVec computes MulTVecAdd64 (x and y not empty) under mulVecVec's conditions,
// with the columns those of y.
func mulTVecAddVec[T Float](y []float64, a []T, lda int, x []float64) bool {
	a32, ok := any(a).([]float32)
	if !ok || len(y)%4 != 0 || !vecKernels() {
		return false
	}
	mulTVecAdd64AVX2(&y[0], &a32[0], &x[0], len(x), len(y), lda)
	return true
}
