package lipschitz

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestStackedNMulVec: N x and N^T x without N equal the products with StackedN's N, for
// three heads of width 4, over whatever y held before.
func TestStackedNMulVec(t *testing.T) {
	const dim, heads = 12, 3
	rng := rand.New(rand.NewPCG(3, 4))
	wq, wv := make([]*mat.Dense, heads), make([]*mat.Dense, heads)
	for h := range heads {
		wq[h], wv[h] = randDense(rng, dim, dim/heads, 1), randDense(rng, dim, dim/heads, 1)
	}
	wo := randDense(rng, dim, dim, 1)
	n := StackedN(wq, wv, wo)
	x := randVec(rng, dim, 1)
	tmp := make([]float64, dim+dim/heads)
	for _, trans := range []bool{false, true} {
		var want mat.VecDense
		if trans {
			want.MulVec(n.T(), mat.NewVecDense(dim, x))
		} else {
			want.MulVec(n, mat.NewVecDense(dim, x))
		}
		y := randVec(rng, dim, 100)
		StackedNMulVec(y, wq, wv, wo, x, trans, tmp)
		for i := range y {
			if w := want.AtVec(i); math.Abs(y[i]-w) > 1e-13*math.Max(1, math.Abs(w)) {
				t.Errorf("trans %v: y[%d] = %.17g, want %.17g", trans, i, y[i], w)
			}
		}
	}
}
