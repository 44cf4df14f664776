//go:build !amd64

package kernel

// mulVecVec does nothing and reports false: the portable loop computes everything.
func mulVecVec[T, U Float](y []float64, a []T, lda int, x []U) bool { return false }

// mulTVecAddVec does nothing and reports false: the portable loop computes everything.
func mulTVecAddVec[T Float](y []float64, a []T, lda int, x []float64) bool { return false }
