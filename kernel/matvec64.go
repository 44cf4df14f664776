package kernel

// MulVec64 writes into y the products a x of the len(y) rows of a (stride lda) with x, in
// float64: y_i = sum_j a_ij x_j over the len(x) columns. Float32 rows of a multiple of 4
// columns run AVX2/FMA assembly where the processor has it (each element widened exactly
// before its multiply-add, four partial sums a row), so the last bits of a sum depend on
// the processor; other rows and processors sum each row left to right in Go (matVec64).
// y must not overlap a or x. The power iterations, the spectral norm estimates and the
// token-norm bound apply their matrices with it.
func MulVec64[T, U Float](y []float64, a []T, lda int, x []U) {
	if len(x) == 0 {
		clear(y)
		return
	}
	if len(y) == 0 {
		return
	}
	_ = a[(len(y)-1)*lda+len(x)-1]
	if mulVecVec(y, a, lda, x) {
		return
	}
	matVec64(y, a, lda, x)
}

// MulTVecAdd64 adds into y the products a^T x of the len(x) rows of a (stride lda) with
// x, in float64: y_j += sum_i x_i a_ij over the len(y) columns, the rows' terms added in
// row order. Float32 rows, for a multiple of 4 columns, run AVX2/FMA assembly where the
// processor has it, which rounds each term's multiply-add once where Go rounds the
// product and the sum, so the last bits depend on the processor. y must not overlap a or
// x.
func MulTVecAdd64[T Float](y []float64, a []T, lda int, x []float64) {
	if len(x) == 0 || len(y) == 0 {
		return
	}
	_ = a[(len(x)-1)*lda+len(y)-1]
	if mulTVecAddVec(y, a, lda, x) {
		return
	}
	for i, xi := range x {
		for j, v := range a[i*lda:][:len(y)] {
			y[j] += xi * float64(v)
		}
	}
}
