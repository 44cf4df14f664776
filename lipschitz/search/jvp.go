package search

import (
	"fmt"
	"math"
)

// DefaultJVPStep is the default step of JVP: 1e-3 in the units of x, along v
// scaled to ||v||_inf = 1.
const DefaultJVPStep = 1e-3

// JVP returns the Jacobian-vector product J(x) v by finite differences of
// outputs: D(t) = (F(x + t v) - F(x - t v)) / (2t) with t = h / ||v||_inf,
// extrapolated as (4 D(t/2) - D(t)) / 3 (Richardson), whose error is O(t^4)
// plus rounding of order 1e-16 |F| / t. The four outputs come from one
// m.Forward call (one graph run for a GraphMap). h must be small against the
// length on which the layer bends: about 1/sqrt(a) for L2 attention with
// query scale a, and 1/(a ||X||_inf) for dot-product attention; h = 1e-3
// (DefaultJVPStep) gives a relative error near 1e-10 on O(1) inputs of unit
// weights. A zero v gives zeros.
//
// An exact JVP would need forward-mode or double backward differentiation,
// which Gorgonia lacks or gets wrong (docs/gorgonia.md); exact J v for small N is
// JacobianOf(m, x) times v.
func JVP(m Map, x, v []float64, h float64) ([]float64, error) {
	k := m.Len()
	if err := checkVec("x", x, k); err != nil {
		return nil, err
	}
	if err := checkVec("v", v, k); err != nil {
		return nil, err
	}
	if !(h > 0) || math.IsInf(h, 1) {
		return nil, fmt.Errorf("search: JVP step h = %v, want finite and > 0", h)
	}
	scale := 0.0
	for _, e := range v {
		scale = math.Max(scale, math.Abs(e))
	}
	out := make([]float64, k)
	if scale == 0 {
		return out, nil
	}
	t := h / scale
	steps := []float64{t, -t, t / 2, -t / 2}
	xs, ys := make([][]float64, 4), make([][]float64, 4)
	for b, st := range steps {
		xs[b], ys[b] = make([]float64, k), make([]float64, k)
		for i := range x {
			xs[b][i] = x[i] + st*v[i]
		}
	}
	if err := m.Forward(xs, ys); err != nil {
		return nil, err
	}
	for i := range out {
		full := (ys[0][i] - ys[1][i]) / (2 * t)
		half := (ys[2][i] - ys[3][i]) / t
		out[i] = (4*half - full) / 3
	}
	return out, nil
}
