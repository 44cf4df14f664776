package lipschitz

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// SpectralNorm estimates ||W||_2 by iters steps of power iteration on
// W^T W, starting from a random unit vector drawn from seed. The estimate
// never exceeds the true norm (up to rounding) and converges to it at a rate
// set by the ratio of the two largest singular values; Norm2 is exact.
//
// It returns an error if w is nil or empty or iters < 1.
func SpectralNorm(w *mat.Dense, iters int, seed uint64) (float64, error) {
	if w == nil || w.IsEmpty() {
		return 0, errors.New("lipschitz: SpectralNorm of a nil or empty matrix")
	}
	if iters < 1 {
		return 0, fmt.Errorf("lipschitz: SpectralNorm iters = %d, want >= 1", iters)
	}
	r, c := w.Dims()
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	v := mat.NewVecDense(c, nil) // (c)
	for k := range c {
		v.SetVec(k, rng.NormFloat64())
	}
	u := mat.NewVecDense(r, nil) // (r)
	sigma := 0.0
	for range iters {
		n := mat.Norm(v, 2)
		if n == 0 {
			return 0, nil
		}
		v.ScaleVec(1/n, v)
		u.MulVec(w, v)
		sigma = mat.Norm(u, 2)
		v.MulVec(w.T(), u)
	}
	if math.IsNaN(sigma) {
		return 0, errors.New("lipschitz: SpectralNorm got NaN (non-finite weights?)")
	}
	return sigma, nil
}
