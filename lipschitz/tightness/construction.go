package tightness

import (
	"math"

	"lipformer/lipschitz/search"
)

// Scan of the construction's spread t: constructionGrid log-spaced values over
// three decades up to the largest spread, then constructionRefine golden-section
// steps around the best.
const (
	constructionGrid   = 41
	constructionRefine = 30
	// constructionMaxT is the largest spread tried without a box.
	constructionMaxT = 10
)

// constructionInput returns the two-cluster input at n tokens and spread t:
// the last token 0 and the others alternately +t and -t in every coordinate.
// For dot-product attention at t = R it is docs/math.md's ("Attention") construction: the
// zero token's row of P is uniform (the last row sees every token even with
// a causal mask) and the others spread as far as the box allows. For D = H = 1
// L2 attention at the best t it gives ||J||_inf about
// 4 W_0((N-1)/e) + 1 - 2W/(W+1), within 2 of the upper bound.
func (c *Config) constructionInput(n int, t float64) []float64 {
	x := make([]float64, n*c.Dim)
	for i := range n - 1 {
		v := t
		if i%2 == 1 {
			v = -t
		}
		for k := range c.Dim {
			x[i*c.Dim+k] = v
		}
	}
	return x
}

// construction returns the largest ||J||_p of obj over the two-cluster
// inputs with spread t in (0, T], T = r in a box, else constructionMaxT, and
// that t: a log-spaced scan, then golden-section refinement. Each value is an
// exact Jacobian norm at an input, hence a lower bound like the search's.
func (c *Config) construction(obj *search.Objective, n int, r float64) (value, spread float64, err error) {
	top := r
	if top == 0 {
		top = constructionMaxT
	}
	eval := func(t float64) float64 {
		if err != nil {
			return 0
		}
		var v float64
		v, err = obj.Value(c.constructionInput(n, t))
		if v > value {
			value, spread = v, t
		}
		return v
	}
	ts := make([]float64, constructionGrid)
	best := 0
	for k := range ts {
		ts[k] = top * math.Pow(1e-3, 1-float64(k)/float64(constructionGrid-1))
		if eval(ts[k]) >= value {
			best = k
		}
	}
	lo, hi := ts[max(best-1, 0)], ts[min(best+1, len(ts)-1)]
	g := (math.Sqrt(5) - 1) / 2
	a, b := hi-g*(hi-lo), lo+g*(hi-lo)
	fa, fb := eval(a), eval(b)
	for range constructionRefine {
		if fa >= fb {
			hi, b, fb = b, a, fa
			a = hi - g*(hi-lo)
			fa = eval(a)
		} else {
			lo, a, fa = a, b, fb
			b = lo + g*(hi-lo)
			fb = eval(b)
		}
	}
	return value, spread, err
}
