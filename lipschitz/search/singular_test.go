package search

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"lipformer/lipschitz"
)

// Both paths of topSingular (SVD for small matrices, power iteration for
// large ones) give the 2-norm and a singular pair with J v = sigma u and
// J^T u = sigma v.
func TestTopSingular(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, k := range []int{5, svdMax, svdMax + 1, 300} {
		j := mat.NewDense(k, k, randVec(rng, k*k, 1/math.Sqrt(float64(k))))
		// A rank-one spike gives a clear gap between the top two values.
		var spike mat.Dense
		spike.Outer(2, mat.NewVecDense(k, randVec(rng, k, 1/math.Sqrt(float64(k)))), mat.NewVecDense(k, randVec(rng, k, 1/math.Sqrt(float64(k)))))
		j.Add(j, &spike)
		top := newTopSingular(k)
		sigma := top.of(j)
		if want := lipschitz.Norm2(j); !(relDiff(sigma, want) < 1e-12) {
			t.Errorf("k=%d: sigma %.15g, SVD %.15g", k, sigma, want)
		}
		var ju, jv mat.VecDense
		jv.MulVec(j, top.v)
		ju.MulVec(j.T(), top.u)
		jv.AddScaledVec(&jv, -sigma, top.u)
		ju.AddScaledVec(&ju, -sigma, top.v)
		if r := math.Max(mat.Norm(&jv, 2), mat.Norm(&ju, 2)) / sigma; !(r < 1e-9) {
			t.Errorf("k=%d: singular pair residual %.3g", k, r)
		}
	}
	if got := newTopSingular(3).of(mat.NewDense(3, 3, nil)); got != 0 {
		t.Errorf("zero matrix: sigma %v, want 0", got)
	}
}
