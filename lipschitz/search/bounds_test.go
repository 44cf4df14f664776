package search

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"lipformer/layers"
	"lipformer/lipschitz"
	"lipformer/ops"
)

// l2Bounds returns the inf-norm and the (corrected) 2-norm upper bounds of a
// tied L2 layer on n tokens.
func l2Bounds(t *testing.T, a *layers.Attention, n int) (inf, two float64) {
	t.Helper()
	wq, wv := heads(t, a.WQ, a.Heads), heads(t, a.WV, a.Heads)
	inf, err := lipschitz.L2MHABoundInf(n, wq, wv, matOf(a.WO))
	if err != nil {
		t.Fatal(err)
	}
	if two, err = lipschitz.L2MHABound2(n, wq, wv, matOf(a.WO)); err != nil {
		t.Fatal(err)
	}
	return inf, two
}

// For random tied L2 weights (several D, H, N, scales, causal or not) the
// lower bound optimised by Maximize never exceeds the upper bound, for either
// norm. A violation would be a finding: the test prints the input and
// weights.
func TestOptimisedLowerBoundBelowL2Bounds(t *testing.T) {
	cases := []struct {
		dim, heads, n int
		causal        bool
		std           float64
	}{
		{1, 1, 8, false, 1},
		{2, 1, 5, true, 1.5},
		{4, 2, 6, false, 0.7},
		{4, 2, 4, true, 1.2},
		{6, 3, 4, false, 1},
		{4, 4, 5, false, 2},
	}
	for i, c := range cases {
		a := newLayer(t, ops.L2, c.dim, c.heads, c.causal, c.std, uint64(30+i))
		m := newGraphMap(t, a, c.n, 0)
		ubInf, ub2 := l2Bounds(t, a, c.n)
		for p, ub := range map[Norm]float64{NormInf: ubInf, Norm2: ub2} {
			r, err := Maximize([]Map{m}, Options{Norm: p, Starts: 3, Steps: 60, LR: 0.05, InitMin: 0.3, InitMax: 2, Seed: uint64(i)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := exactNorm(t, m, p, r.X); !(relDiff(r.Best, want) < 1e-9) {
				t.Errorf("case %d ||J||_%v: reported %.12g, exact norm at its input %.12g", i, p, r.Best, want)
			}
			what := fmt.Sprintf("D=%d H=%d N=%d causal=%t std %v ||J||_%v", c.dim, c.heads, c.n, c.causal, c.std, p)
			if r.Best > ub {
				t.Errorf("%s: lower bound %.10g exceeds the upper bound %.10g\nX = %v\nW^Q = %v\nW^V = %v\nW^O = %v", what, r.Best, ub,
					r.X, mat.Formatted(matOf(a.WQ)), mat.Formatted(matOf(a.WV)), mat.Formatted(matOf(a.WO)))
			}
			t.Logf("%s: lower %.4g, upper %.4g, ratio %.3f", what, r.Best, ub, r.Best/ub)
		}
	}
}

// twoClusters is the input of n tokens with x_0 = 0 and the others split
// evenly between -t and t. For D = H = 1 unit-weight L2 attention it makes
// row 0 of J sum to about 4 W_0((n-1)/e) + 1 - 2 W/(W+1) at the best t: the
// configuration the ascent should find.
func twoClusters(n int, t float64) []float64 {
	x := make([]float64, n)
	for k := 1; k < n; k++ {
		x[k] = t
		if k%2 == 0 {
			x[k] = -t
		}
	}
	return x
}

// Maximize does its job on D = H = 1 unit-weight L2 attention: from random
// starts it finds at least the value of the best two-cluster input (found
// here by a scan of t) at N = 8, and from that input perturbed it climbs back
// to at least its value at N = 40 and 200 (random starts there end at uneven
// cluster splits, local maxima a little lower). All stay below the bound.
func TestMaximizeFindsTwoClusters(t *testing.T) {
	for _, n := range []int{8, 40, 200} {
		s, err := NewScalar(ops.L2, n, false, 1, 1, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		family, best := 0.0, 0.0
		for step := 1; step <= 400; step++ {
			if v := exactNorm(t, s, NormInf, twoClusters(n, 0.01*float64(step))); v > family {
				family, best = v, 0.01*float64(step)
			}
		}
		o := Options{Norm: NormInf, Starts: 8, Steps: 200, LR: 0.03, InitMin: 0.2, InitMax: 2, Seed: 3}
		if n > 8 {
			init := twoClusters(n, best)
			rng := rand.New(rand.NewPCG(4, 4))
			for k := range init {
				init[k] += 0.05 * rng.NormFloat64()
			}
			o.Starts, o.Init = 1, [][]float64{init}
		}
		r, err := Maximize([]Map{s}, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		ub := 4*lipschitz.PhiInv(n) + 1
		if !(r.Best >= family) || r.Best > ub {
			t.Errorf("N=%d: lower bound %.6g, want at least the two-cluster value %.6g and at most the bound %.6g", n, r.Best, family, ub)
		}
		t.Logf("N=%d: lower bound %.4f, two clusters %.4f, upper bound %.4f", n, r.Best, family, ub)
	}
}
