package search

import (
	"math"
	"math/rand/v2"
)

// The escape's scan of scales: doublings from escapeMin, then bisections of
// the last doubling in log scale (each halves the bracket's ratio's
// exponent; six leave it within 1.1%).
const (
	escapeMin        = 1.0 / 256
	escapeDoublings  = 24
	escapeBisections = 6
)

// startPoint returns the input of start s: o.Init[s] projected onto the box,
// else a draw from rng: uniform in the box, or without one an N(0, 1) direction
// scaled to the plateau's edge (o.Escape > 0, see escape) or N(0, sigma^2)
// entries with sigma log-uniform in [o.InitMin, o.InitMax] (o.Escape = 0).
func startPoint(obj *Objective, o Options, s int, rng *rand.Rand) ([]float64, error) {
	k := obj.m.Len()
	if s < len(o.Init) {
		x := append([]float64(nil), o.Init[s]...)
		project(x, o.Radius)
		return x, nil
	}
	x := make([]float64, k)
	if o.Radius > 0 {
		rng.Float64() // the unused sigma draw: box starts do not depend on o.Escape
		for i := range x {
			x[i] = o.Radius * (2*rng.Float64() - 1)
		}
		return x, nil
	}
	if o.Escape > 0 {
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		return escape(obj, x, o.Escape)
	}
	sigma := o.InitMin * math.Pow(o.InitMax/o.InitMin, rng.Float64())
	for i := range x {
		x[i] = sigma * rng.NormFloat64()
	}
	return x, nil
}

// escape returns t z for about the smallest t > 0 with ||J(t z)|| > (1 + rise)
// ||J(0)||: the edge of the plateau around 0. For L2 attention with D = H = 1
// a row of J whose entries are all positive sums to exactly 1, the derivative
// along a translation, so ||J||_inf is 1 with a zero gradient wherever every
// entry is positive: a start inside stays there. Larger starts escape it but,
// for large N, lead to poorer local maxima; the plateau's edge avoids both
// (docs/lipschitz_search.md). If no scale up to escapeMin 2^(escapeDoublings-1)
// rises that far, it returns z at the scale of the largest norm met.
func escape(obj *Objective, z []float64, rise float64) ([]float64, error) {
	x := make([]float64, len(z))
	at := func(t float64) (float64, error) {
		for i, e := range z {
			x[i] = t * e
		}
		return obj.Value(x)
	}
	v0, err := at(0)
	if err != nil {
		return nil, err
	}
	target := (1 + rise) * v0
	lo, hi := 0.0, escapeMin
	bestT, bestV, found := 0.0, v0, false
	for range escapeDoublings {
		v, err := at(hi)
		if err != nil {
			return nil, err
		}
		if found = v > target; found {
			break
		}
		if v > bestV {
			bestT, bestV = hi, v
		}
		lo, hi = hi, 2*hi
	}
	if !found {
		_, err := at(bestT)
		return x, err
	}
	for range escapeBisections {
		mid := math.Sqrt(lo * hi)
		if lo == 0 {
			mid = hi / 2
		}
		v, err := at(mid)
		if err != nil {
			return nil, err
		}
		if v > target {
			hi = mid
		} else {
			lo = mid
		}
	}
	_, err = at(hi)
	return x, err
}

// perturbed returns x, a sequence of tokens of width w, plus N(0, (scale
// sd / sqrt(N))^2) noise on every entry, sd the standard deviation of x's
// entries and N the number of tokens, projected onto the box. The noise's
// total size does not grow with N: enough to move a token into another
// cluster at small N (the local maxima differ in how the tokens split into
// clusters, docs/lipschitz_search.md) without scrambling the clusters at
// large N.
func perturbed(x []float64, w int, scale, radius float64, rng *rand.Rand) []float64 {
	mean, sd := 0.0, 0.0
	for _, e := range x {
		mean += e
	}
	mean /= float64(len(x))
	for _, e := range x {
		sd += (e - mean) * (e - mean)
	}
	sd = math.Sqrt(sd / float64(len(x)))
	noise := scale * sd / math.Sqrt(float64(len(x)/w))
	out := make([]float64, len(x))
	for i, e := range x {
		out[i] = e + noise*rng.NormFloat64()
	}
	project(out, radius)
	return out
}
