package search

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Limits of topSingular: matrices up to svdMax rows get an exact SVD; larger
// ones power iteration until the residual ||J^T u - sigma v|| is at most
// powerTol sigma, or powerIters iterations.
const (
	svdMax     = 160
	powerTol   = 1e-10
	powerIters = 2000
)

// topSingular finds the largest singular value of square matrices and its
// singular vectors: exactly by an SVD for small ones, else by power iteration
// on J^T J warm-started from the previous call's right singular vector, which
// suits a sequence of nearby matrices (an ascent).
type topSingular struct {
	u, v *mat.VecDense // left and right unit singular vectors
	w    *mat.VecDense // scratch
	svd  mat.SVD
}

// newTopSingular starts from a fixed pseudo-random unit vector of length k.
func newTopSingular(k int) *topSingular {
	rng := rand.New(rand.NewPCG(0x5167, 0x5eed))
	v := mat.NewVecDense(k, nil)
	for i := range k {
		v.SetVec(i, rng.NormFloat64())
	}
	v.ScaleVec(1/mat.Norm(v, 2), v)
	return &topSingular{u: mat.NewVecDense(k, nil), v: v, w: mat.NewVecDense(k, nil)}
}

// of returns sigma = ||J v|| for the final unit v, and leaves the pair in
// u = J v / sigma and v. sigma never exceeds ||J||_2 (up to rounding), so it is
// a valid lower bound however far power iteration got. A zero J gives 0.
func (t *topSingular) of(j *mat.Dense) float64 {
	if r, _ := j.Dims(); r > svdMax || !t.exact(j) {
		t.power(j)
	}
	t.u.MulVec(j, t.v)
	sigma := mat.Norm(t.u, 2)
	if sigma > 0 {
		t.u.ScaleVec(1/sigma, t.u)
	}
	return sigma
}

// exact sets v to the top right singular vector from an SVD, reporting
// whether the decomposition succeeded.
func (t *topSingular) exact(j *mat.Dense) bool {
	if !t.svd.Factorize(j, mat.SVDThinV) {
		return false
	}
	var vs mat.Dense
	t.svd.VTo(&vs)
	t.v.CopyVec(vs.ColView(0))
	return true
}

// power runs power iteration on J^T J from the current v.
func (t *topSingular) power(j *mat.Dense) {
	for range powerIters {
		t.u.MulVec(j, t.v)
		s := mat.Norm(t.u, 2)
		if s == 0 {
			return
		}
		t.w.MulVec(j.T(), t.u)
		t.w.ScaleVec(1/s, t.w) // J^T J v / s, which is s v at convergence
		t.v.AddScaledVec(t.w, -s, t.v)
		residual := mat.Norm(t.v, 2)
		t.v.ScaleVec(1/mat.Norm(t.w, 2), t.w)
		if residual <= powerTol*s {
			return
		}
	}
}
