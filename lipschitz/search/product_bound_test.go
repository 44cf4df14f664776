package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"lipformer/layers"
	"lipformer/lipschitz"
	"lipformer/ops"
)

// productBound is the product-form inf-norm bound of a tied L2 layer on n tokens, at the
// weights it applies (temperatures included), checked against Kim et al.'s for one head.
func productBound(t *testing.T, a *layers.Attention, n int) float64 {
	t.Helper()
	ub, err := a.RawBound(ops.BoundProduct, n)
	if err != nil {
		t.Fatal(err)
	}
	kim, err := a.RawBound(ops.BoundKim, n)
	if err != nil {
		t.Fatal(err)
	}
	if a.Heads == 1 && ub > kim*(1+1e-12) {
		t.Fatalf("one head: product bound %v above Kim et al.'s %v", ub, kim)
	}
	return ub
}

// setIdentityHeads gives every head of a (D, D) layer the query map [I_d; 0] on the first
// d input features, W^V = W^Q, and W^O mapping every head onto the same first d outputs:
// the heads add coherently, the case in which the product bound is the tightest.
func setIdentityHeads(a *layers.Attention) {
	dim := a.WQ.Value.Shape()[0]
	d := dim / a.Heads
	for _, p := range []*layers.Param{a.WQ, a.WV, a.WO} {
		w := p.Value.Data().([]float64)
		clear(w)
		for h := range a.Heads {
			for r := range d {
				if p == a.WO {
					w[(h*d+r)*dim+r] = 1
				} else {
					w[r*dim+h*d+r] = 1
				}
			}
		}
	}
}

// The product bound is never exceeded by the optimised ||J||_inf of the layer: for widths D
// from 1 to 128, 1 to 4 heads, random weights of several scales, coherent identity heads
// (the tight case) and random temperatures, causal or not. A violation is a bug in the
// derivation (docs/math.md) and prints the weights.
func TestProductBoundNeverExceeded(t *testing.T) {
	type tc struct {
		dim, heads, n int
		causal        bool
		std           float64 // 0: identity heads
		temp          bool
	}
	cases := []tc{
		{1, 1, 8, false, 0, false}, {2, 1, 6, false, 0, false}, {4, 1, 6, true, 0, false}, {8, 1, 4, false, 0, false},
		{4, 2, 6, false, 0, false}, {8, 4, 4, false, 0, false}, {4, 2, 5, true, 0, true},
		{2, 1, 8, false, 1, false}, {4, 2, 8, true, 0.7, false}, {4, 4, 6, false, 1.5, true},
		{8, 2, 6, false, 0.5, true}, {16, 4, 4, true, 0.3, false}, {32, 4, 3, false, 0.2, true},
		{64, 2, 2, false, 0.15, false}, {128, 4, 2, true, 0.1, true},
	}
	for i, c := range cases {
		std := c.std
		if std == 0 {
			std = 1
		}
		a := newLayer(t, ops.L2, c.dim, c.heads, c.causal, std, uint64(70+i))
		if c.std == 0 {
			setIdentityHeads(a)
		}
		if c.temp {
			if err := a.AddTemperature("attn"); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(i), 9))
			s, same := a.LogTemp.Value.Data().([]float64), rng.NormFloat64()
			for h := range s {
				s[h] = rng.NormFloat64()
				if c.std == 0 { // coherent heads share one temperature
					s[h] = same
				}
			}
		}
		ub := productBound(t, a, c.n)
		m := newGraphMap(t, a, c.n, 0)
		starts, steps := 6, 120
		if c.dim*c.n > 64 {
			starts, steps = 2, 60
		}
		r, err := Maximize([]Map{m}, Options{Norm: NormInf, Starts: starts, Steps: steps, LR: 0.05, InitMin: 0.05, InitMax: 3, Seed: uint64(i)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("D=%d H=%d N=%d causal=%t std=%v temperatures=%t", c.dim, c.heads, c.n, c.causal, c.std, c.temp)
		if r.Best > ub {
			t.Errorf("%s: ||J||_inf %.10g exceeds the product bound %.10g\nX = %v\nW^Q = %v\nW^V = %v\nW^O = %v", what, r.Best, ub,
				r.X, mat.Formatted(matOf(a.WQ)), mat.Formatted(matOf(a.WV)), mat.Formatted(matOf(a.WO)))
		}
		if c.std == 0 && !(r.Best > 0.5*ub) {
			t.Errorf("%s: the tight case reaches only %.4g of the bound %.4g: the search is too weak to test it", what, r.Best, ub)
		}
		kim, err := a.RawBound(ops.BoundKim, c.n)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: lower %.4g, product bound %.4g (ratio %.3f), Kim et al.'s %.4g (ratio %.3f)", what, r.Best, ub, r.Best/ub, kim, r.Best/kim)
	}
}

// The constant of u(Y) = P(Y) Y does not depend on the logits' temperature: the same layer
// with every head's temperature moved reaches the same best ||J||_inf from the same
// (rescaled) inputs, up to the search's own noise.
func TestIdentityConstantTemperatureFree(t *testing.T) {
	const n = 6
	a := newLayer(t, ops.L2, 2, 1, false, 1, 3)
	setIdentityHeads(a)
	m := newGraphMap(t, a, n, 0)
	o := Options{Norm: NormInf, Starts: 6, Steps: 150, LR: 0.05, InitMin: 0.1, InitMax: 2, Seed: 5}
	r, err := Maximize([]Map{m}, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.AddTemperature("attn"); err != nil {
		t.Fatal(err)
	}
	a.LogTemp.Value.Data().([]float64)[0] = 1 // logits times e^2, values times e^-2 ... the same u
	mt := newGraphMap(t, a, n, 0)
	x := append([]float64(nil), r.X...)
	for k := range x {
		x[k] *= math.Exp(-1)
	}
	got := exactNorm(t, mt, NormInf, x)
	if math.Abs(got-r.Best) > 1e-9*r.Best {
		t.Errorf("||J||_inf %v at the rescaled input with temperature, %v without", got, r.Best)
	}
	if ub := lipschitz.IdentityL2LipInf(n, 2) / math.Sqrt(2); r.Best > ub {
		t.Errorf("||J||_inf %v above the bound %v", r.Best, ub)
	}
}
