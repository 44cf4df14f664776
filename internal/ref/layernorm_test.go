package ref

import (
	"math/rand/v2"
	"testing"
)

func TestLayerNormHandComputed(t *testing.T) {
	// Row [1, 2, 3]: mean 2, biased variance 2/3; with eps = 1/3 the
	// denominator is sqrt(1) and the normalised row is [-1, 0, 1].
	x := [][]float64{{1, 2, 3}, {3, 2, 1}}
	got, err := LayerNorm(x, []float64{2, 3, 4}, []float64{1, 1, 1}, 1.0/3)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "LayerNorm", got, [][]float64{{-1, 1, 5}, {3, 1, -3}}, 1e-15)
}

func TestLayerNormInvariances(t *testing.T) {
	// With eps = 0, LayerNorm(a x + c) = LayerNorm(x) for a > 0.
	rng := rand.New(rand.NewPCG(3, 4))
	x := randSeq(rng, 4, 6, 1)
	gamma, beta := randSeq(rng, 1, 6, 1)[0], randSeq(rng, 1, 6, 1)[0]
	moved := zeros(4, 6)
	for i := range x {
		for k := range x[i] {
			moved[i][k] = 7.5*x[i][k] - 3
		}
	}
	want, err := LayerNorm(x, gamma, beta, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := LayerNorm(moved, gamma, beta, 0)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "LayerNorm(7.5x-3)", got, want, 1e-13)
}

func TestLayerNormErrors(t *testing.T) {
	x := [][]float64{{1, 2, 3}}
	one := []float64{1, 1, 1}
	if _, err := LayerNorm(x, []float64{1, 1}, one, 1e-5); err == nil {
		t.Error("gamma of length 2 for D = 3: want error")
	}
	if _, err := LayerNorm(x, one, []float64{1}, 1e-5); err == nil {
		t.Error("beta of length 1 for D = 3: want error")
	}
	if _, err := LayerNorm(x, one, one, -1); err == nil {
		t.Error("eps = -1: want error")
	}
	if _, err := LayerNorm(nil, one, one, 1e-5); err == nil {
		t.Error("empty x: want error")
	}
}
