package search

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"lipformer/ops"
)

// The closed-form D = H = 1 attention matches the graph of the same layer:
// outputs, Jacobians and VJPs, for dot-product and L2, causal or not, random
// weights and inputs of several scales.
func TestScalarMatchesGraph(t *testing.T) {
	for _, kind := range []ops.AttentionKind{ops.DotProduct, ops.L2} {
		for _, causal := range []bool{false, true} {
			for seed, n := range []int{1, 2, 7, 30} {
				a := newLayer(t, kind, 1, 1, causal, 1.3, uint64(seed))
				what := fmt.Sprintf("%v causal=%t N=%d", kind, causal, n)
				s, err := ScalarFromLayer(a, n)
				if err != nil {
					t.Fatal(err)
				}
				g := newGraphMap(t, a, n, 0)
				rng := rand.New(rand.NewPCG(uint64(seed), 5))
				for _, scale := range []float64{0.1, 1, 3} {
					x := randVec(rng, n, scale)
					if e := relErr(mustJacobian(t, s, x), mustJacobian(t, g, x)); !(e < 1e-12) {
						t.Errorf("%s scale %v: Jacobians differ by %.3g", what, scale, e)
					}
					ys, yg := [][]float64{make([]float64, n)}, [][]float64{make([]float64, n)}
					if err := s.Forward([][]float64{x}, ys); err != nil {
						t.Fatal(err)
					}
					if err := g.Forward([][]float64{x}, yg); err != nil {
						t.Fatal(err)
					}
					if e := vecErr(ys[0], yg[0]); !(e < 1e-13) {
						t.Errorf("%s scale %v: outputs differ by %.3g", what, scale, e)
					}
				}
				checkProducts(t, what, s, rng, 1)
			}
		}
	}
}

func TestScalarErrors(t *testing.T) {
	if _, err := NewScalar(ops.L2Untied, 4, false, 1, 1, 1, 1); err == nil {
		t.Error("l2-untied: want error")
	}
	if _, err := NewScalar(ops.L2, 0, false, 1, 1, 1, 1); err == nil {
		t.Error("n = 0: want error")
	}
	if _, err := ScalarFromLayer(newLayer(t, ops.L2, 2, 1, false, 1, 1), 4); err == nil {
		t.Error("D = 2: want error")
	}
	s, err := NewScalar(ops.L2, 3, false, 1, 1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := JacobianOf(s, []float64{1, 2}); err == nil {
		t.Error("x of the wrong length: want error")
	}
	if err := s.VJP([][]float64{{1, 2, 3}}, nil, [][]float64{make([]float64, 3)}); err == nil {
		t.Error("VJP without weights: want error")
	}
}
