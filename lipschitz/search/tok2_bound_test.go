package search

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"lipformer/lipschitz"
	"lipformer/ops"
)

// tok2At is the token norm (a lower bound, lipschitz.JacobianNormTok2) of the layer's exact
// Jacobian at x.
func tok2At(t *testing.T, m *GraphMap, x []float64, n, dim int) float64 {
	t.Helper()
	j := mat.NewDense(n*dim, n*dim, nil)
	if err := m.Jacobian(x, j); err != nil {
		t.Fatal(err)
	}
	v, err := lipschitz.JacobianNormTok2(j, n, 30)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// climbTok2 improves x by random steps that raise the token norm of J (a step is kept when
// it raises it, and the step size adapts), from the best of the given starts.
func climbTok2(t *testing.T, m *GraphMap, starts [][]float64, n, dim, steps int, seed uint64) (float64, []float64) {
	t.Helper()
	best, x := -1.0, []float64(nil)
	for _, s := range starts {
		if v := tok2At(t, m, s, n, dim); v > best {
			best, x = v, append([]float64(nil), s...)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	step := 0.1
	y := make([]float64, len(x))
	for range steps {
		for k := range x {
			y[k] = x[k] + step*rng.NormFloat64()
		}
		if v := tok2At(t, m, y, n, dim); v > best {
			best, x, step = v, append(x[:0], y...), step*1.5
		} else {
			step *= 0.9
		}
	}
	return best, x
}

// The token-norm bound is never exceeded by the searched token norm of the layer's exact
// Jacobian: widths D from 1 to 128, 1 to 4 heads, coherent identity heads (the tight case),
// random weights of several scales, random temperatures and random position biases. Starts are the inputs that
// maximise ||J||_inf and ||J||_2 and random inputs of several scales, improved by a random
// climb on the token norm itself. A violation is a bug in the derivation (docs/math.md).
func TestTok2BoundNeverExceeded(t *testing.T) {
	type tc struct {
		dim, heads, n int
		causal        bool
		std           float64 // 0: identity heads
		temp          bool
		bias          float64 // causal only: a random position bias of this scale, or 0 for none
	}
	cases := []tc{
		{1, 1, 8, false, 0, false, 0}, {2, 1, 6, false, 0, false, 0}, {4, 1, 6, true, 0, false, 0}, {4, 2, 5, false, 0, true, 0},
		{8, 4, 4, false, 0, false, 0}, {2, 1, 6, false, 1, false, 0}, {4, 2, 6, true, 0.7, true, 0},
		{8, 2, 4, false, 0.5, false, 0}, {16, 4, 3, true, 0.3, true, 0}, {32, 4, 2, false, 0.2, false, 0},
		{64, 2, 2, false, 0.15, true, 0}, {128, 4, 2, true, 0.1, false, 0},
		{1, 1, 8, true, 0, false, 2}, {2, 1, 6, true, 0, false, 4}, {4, 2, 6, true, 0, true, 1},
		{4, 2, 6, true, 0.7, true, 3}, {8, 4, 4, true, 0.5, false, 2}, {32, 4, 3, true, 0.2, true, 2},
	}
	for i, c := range cases {
		std := c.std
		if std == 0 {
			std = 1
		}
		a := newLayer(t, ops.L2, c.dim, c.heads, c.causal, std, uint64(90+i))
		if c.std == 0 {
			setIdentityHeads(a)
		}
		if c.temp {
			if err := a.AddTemperature("attn"); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(i), 11))
			s, same := a.LogTemp.Value.Data().([]float64), rng.NormFloat64()
			for h := range s {
				s[h] = rng.NormFloat64()
				if c.std == 0 {
					s[h] = same
				}
			}
		}
		if c.bias > 0 {
			if err := a.AddPositionBias("attn", c.n); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(i), 17))
			b := a.PosBias.Value.Data().([]float64)
			for e := range b {
				b[e] = c.bias * rng.NormFloat64()
			}
			if c.std == 0 { // coherent heads share one bias
				for e := c.n; e < len(b); e++ {
					b[e] = b[e%c.n]
				}
			}
		}
		ub, err := a.RawBound(ops.BoundTok2, c.n)
		if err != nil {
			t.Fatal(err)
		}
		m := newGraphMap(t, a, c.n, 0)
		k := c.n * c.dim
		var starts [][]float64
		for _, p := range []Norm{NormInf, Norm2} {
			r, err := Maximize([]Map{m}, Options{Norm: p, Starts: 3, Steps: 60, LR: 0.05, InitMin: 0.05, InitMax: 3, Seed: uint64(i)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			starts = append(starts, r.X)
			if p != NormInf || c.bias == 0 {
				continue
			}
			// The product bound with a bias (the inf-norm lemma with phi^{-1}(S_h)).
			prod, err := a.RawBound(ops.BoundProduct, c.n)
			if err != nil {
				t.Fatal(err)
			}
			if r.Best > prod {
				t.Errorf("case %d: ||J||_inf %.10g exceeds the biased product bound %.10g", i, r.Best, prod)
			}
			t.Logf("case %d: ||J||_inf %.4g, biased product bound %.4g, ratio %.3f", i, r.Best, prod, r.Best/prod)
		}
		rng := rand.New(rand.NewPCG(uint64(i), 13))
		for s := range 6 {
			x := make([]float64, k)
			for e := range x {
				x[e] = []float64{0.1, 0.5, 1, 2, 4, 8}[s] * rng.NormFloat64()
			}
			starts = append(starts, x)
		}
		steps := 150
		if k > 64 {
			steps = 20
		}
		best, x := climbTok2(t, m, starts, c.n, c.dim, steps, uint64(i))
		what := fmt.Sprintf("D=%d H=%d N=%d causal=%t std=%v temperatures=%t bias=%v", c.dim, c.heads, c.n, c.causal, c.std, c.temp, c.bias)
		if best > ub {
			t.Errorf("%s: token norm of J %.10g exceeds the bound %.10g\nX = %v\nW^Q = %v\nW^V = %v\nW^O = %v", what, best, ub,
				x, mat.Formatted(matOf(a.WQ)), mat.Formatted(matOf(a.WV)), mat.Formatted(matOf(a.WO)))
		}
		if c.std == 0 && !(best > 0.5*ub) {
			t.Errorf("%s: the tight case reaches only %.4g of the bound %.4g: the search is too weak to test it", what, best, ub)
		}
		t.Logf("%s: lower %.4g, token-norm bound %.4g, ratio %.3f", what, best, ub, best/ub)
	}
}
