package ref

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSoftmaxEqualLogitsIsUniform(t *testing.T) {
	// Huge equal logits also check the max shift: exp(1000) overflows.
	got, err := Softmax([][]float64{{1000, 1000, 1000, 1000}, {-3, -3, -3, -3}}, false)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "softmax", got, [][]float64{{0.25, 0.25, 0.25, 0.25}, {0.25, 0.25, 0.25, 0.25}}, 1e-15)
}

func TestSoftmaxHandComputed(t *testing.T) {
	// exp(0) : exp(ln 2) : exp(ln 5) = 1 : 2 : 5.
	got, err := Softmax([][]float64{{0, math.Log(2), math.Log(5)}}, false)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "softmax", got, [][]float64{{1.0 / 8, 2.0 / 8, 5.0 / 8}}, 1e-15)
}

func TestSoftmaxCausal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	logits := randSeq(rng, 5, 5, 3)
	got, err := Softmax(logits, true)
	if err != nil {
		t.Fatal(err)
	}
	if got[0][0] != 1 {
		t.Errorf("causal row 0 = %v, want one-hot on itself", got[0])
	}
	for i := range got {
		for j := i + 1; j < 5; j++ {
			if got[i][j] != 0 {
				t.Errorf("causal P[%d][%d] = %v, want 0", i, j, got[i][j])
			}
		}
		// The kept part is the plain softmax of the prefix j <= i.
		prefix, err := Softmax([][]float64{logits[i][:i+1]}, false)
		if err != nil {
			t.Fatal(err)
		}
		assertClose(t, "causal row", [][]float64{got[i][:i+1]}, prefix, 1e-15)
	}
}

func TestSoftmaxErrors(t *testing.T) {
	if _, err := Softmax(nil, false); err == nil {
		t.Error("Softmax(nil): want error")
	}
	if _, err := Softmax([][]float64{{1, 2}, {3}}, false); err == nil {
		t.Error("Softmax(ragged): want error")
	}
	if _, err := Softmax([][]float64{{1, 2, 3}, {4, 5, 6}}, true); err == nil {
		t.Error("causal Softmax(2x3): want error")
	}
}
