package lipschitz

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// JacobianNormTok2 returns a lower bound on the operator norm of j (n out, n in), the
// Jacobian of a map from sequences of n tokens of width in to n tokens of width out, in
// the token norm ||X||_{inf,2} = max_i ||x_i||_2: the local token-norm Lipschitz constant
// is max_i sup { ||J_i dX||_2 : ||dx_k||_2 <= 1 for every k }, J_i the out rows of token i.
// For each i it runs iters steps of alternating ascent from the top singular vector of
// J_i (y = J_i dX / ||J_i dX||, then dx_k = J_ik^T y / ||J_ik^T y||); every iterate is
// feasible, so the value is attained and never above the norm. It is exact for
// in = out = 1.
func JacobianNormTok2(j *mat.Dense, n, iters int) (float64, error) {
	r, c := j.Dims()
	if n < 1 || r%n != 0 || c%n != 0 || r == 0 || c == 0 {
		return 0, fmt.Errorf("lipschitz: Jacobian %dx%d is not %d tokens by %d tokens", r, c, n, n)
	}
	out, dim := r/n, c/n
	best := 0.0
	x := mat.NewVecDense(n*dim, nil)
	var y, ty mat.VecDense
	for i := range n {
		ji := j.Slice(i*out, (i+1)*out, 0, n*dim)
		var svd mat.SVD
		if !svd.Factorize(ji, mat.SVDThinU) {
			return 0, fmt.Errorf("lipschitz: SVD of token %d's Jacobian rows failed", i)
		}
		var u mat.Dense
		svd.UTo(&u)
		y.CloneFromVec(u.ColView(0))
		for it := 0; it <= iters; it++ {
			ty.MulVec(ji.T(), &y) // (ND)
			for k := range n {
				blk := ty.SliceVec(k*dim, (k+1)*dim)
				norm := mat.Norm(blk, 2)
				for e := range dim {
					v := 0.0
					if norm > 0 {
						v = blk.AtVec(e) / norm
					}
					x.SetVec(k*dim+e, v)
				}
			}
			y.MulVec(ji, x)
			val := mat.Norm(&y, 2)
			best = math.Max(best, val)
			if val == 0 {
				break
			}
			y.ScaleVec(1/val, &y)
		}
	}
	return best, nil
}
