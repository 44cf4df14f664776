package lipschitz

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"lipformer/internal/ref"
)

// randDense returns an (r, c) matrix of N(0, scale^2) entries.
func randDense(rng *rand.Rand, r, c int, scale float64) *mat.Dense {
	w := mat.NewDense(r, c, nil)
	for i := range r {
		for j := range c {
			w.Set(i, j, scale*rng.NormFloat64())
		}
	}
	return w
}

// randVec returns n N(0, scale^2) values.
func randVec(rng *rand.Rand, n int, scale float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = scale * rng.NormFloat64()
	}
	return v
}

// seqMap turns a map of (n, dim) sequences into a map on vec(X), failing t
// on any error, for use with Jacobian.
func seqMap(t *testing.T, n, dim int, f func(x [][]float64) ([][]float64, error)) func([]float64) []float64 {
	return func(v []float64) []float64 {
		x, err := ref.Unflatten(v, n, dim)
		if err != nil {
			t.Fatal(err)
		}
		y, err := f(x)
		if err != nil {
			t.Fatal(err)
		}
		out, err := ref.Flatten(y)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
}

// mustJacobian is Jacobian that fails t on error.
func mustJacobian(t *testing.T, f func([]float64) []float64, x []float64, h float64) *mat.Dense {
	t.Helper()
	j, err := Jacobian(f, x, h)
	if err != nil {
		t.Fatal(err)
	}
	return j
}
