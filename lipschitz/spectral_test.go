package lipschitz

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestSpectralNormMatchesSVD(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, shape := range [][2]int{{8, 5}, {5, 8}, {6, 6}, {1, 7}, {16, 16}} {
		w := randDense(rng, shape[0], shape[1], 1)
		exact := Norm2(w)
		got, err := SpectralNorm(w, 2000, 7)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-exact) > 1e-10*exact {
			t.Errorf("%dx%d: SpectralNorm = %.15g, SVD = %.15g", shape[0], shape[1], got, exact)
		}
		few, err := SpectralNorm(w, 2, 7)
		if err != nil {
			t.Fatal(err)
		}
		if few > exact*(1+1e-12) {
			t.Errorf("%dx%d: 2-step estimate %.15g exceeds the norm %.15g", shape[0], shape[1], few, exact)
		}
	}
}

func TestSpectralNormEdgeCases(t *testing.T) {
	if got, err := SpectralNorm(mat.NewDense(3, 2, nil), 5, 1); err != nil || got != 0 {
		t.Errorf("SpectralNorm(0) = %v, %v; want 0, nil", got, err)
	}
	if _, err := SpectralNorm(nil, 5, 1); err == nil {
		t.Error("nil matrix: want error")
	}
	if _, err := SpectralNorm(mat.NewDense(2, 2, []float64{1, 0, 0, 1}), 0, 1); err == nil {
		t.Error("iters = 0: want error")
	}
}
