package kernel

import "math"

// GELU writes y = x Phi(x) elementwise, Phi the standard normal CDF (the exact GELU, not
// the tanh approximation), in parallel chunks. float32 is computed in float32 arithmetic
// with a rational erf and a polynomial exp, within 2e-7 (1 + |x|) of the exact value;
// float64 with math.Erf. y must not overlap x.
func GELU[T Float](y, x []T) { mapChunks(y, x, gelu, gelu32) }

// GELUGrad writes dx = dy * GELU'(x) elementwise, in parallel chunks, with GELU'(x) =
// Phi(x) + x phi(x) within 3e-7 (1 + |x|) of the exact value in float32. dx must not
// overlap x or dy.
func GELUGrad[T Float](dx, x, dy []T) { chainChunks(dx, x, dy, geluDeriv, geluGrad32) }

// gelu is x Phi(x): 0 at -Inf, its limit (the formula would give -Inf * 0).
func gelu(x float64) float64 {
	if math.IsInf(x, -1) {
		return 0
	}
	return 0.5 * x * (1 + math.Erf(x/math.Sqrt2))
}

// geluDeriv is Phi(x) + x phi(x): 0 at -Inf and 1 at +Inf, where x phi(x) tends to 0.
func geluDeriv(x float64) float64 {
	const invSqrt2Pi = 0.3989422804014327
	if math.IsInf(x, 0) {
		return 0.5 * (1 + math.Erf(x))
	}
	return 0.5*(1+math.Erf(x/math.Sqrt2)) + x*invSqrt2Pi*math.Exp(-0.5*x*x)
}

// geluFastMax bounds the inputs of the fast float32 kernels: beyond it Phi or 1 - Phi is
// below 1.4e-3, and the exact float64 functions keep its relative accuracy.
const geluFastMax = 3

// gelu32 writes y = gelu(x) in float32, within 2e-7 (1 + |x|) of the exact value: the
// AVX2 kernel where the processor has one, then gelu32Go on the rest. y must not overlap
// x: inputs outside the fast range are read again after y is written.
func gelu32(y, x []float32) {
	y = y[:len(x)]
	n := geluVec(y, x)
	gelu32Go(y[n:], x[n:])
}

// gelu32Go is gelu32 in portable Go, in blocks: erf32s on x/sqrt(2) clamped to the fast
// range, then the exact function where |x| > geluFastMax.
func gelu32Go(y, x []float32) {
	var z [fastBlock]float32
	y = y[:len(x)]
	for lo := 0; lo < len(x); lo += fastBlock {
		xb, yb := x[lo:min(lo+fastBlock, len(x))], y[lo:min(lo+fastBlock, len(x))]
		zb := z[:len(xb)]
		for i, v := range xb {
			zb[i] = min(max(v, -geluFastMax), geluFastMax) * (math.Sqrt2 / 2)
		}
		erf32s(zb, zb)
		for i, v := range xb {
			yb[i] = 0.5 * v * (1 + zb[i])
		}
		geluOutside(yb, xb)
	}
}

// geluOutside sets y = gelu(x) with the exact float64 function where x is outside
// [-geluFastMax, geluFastMax] or NaN, and leaves the other elements.
func geluOutside(y, x []float32) {
	for i, v := range x {
		if !(v >= -geluFastMax && v <= geluFastMax) {
			y[i] = float32(gelu(float64(v)))
		}
	}
}

// geluGrad32 writes dx = dy * gelu'(x) in float32, with gelu'(x) within 3e-7 (1 + |x|) of
// the exact value: the AVX2 kernel where the processor has one, then geluGrad32Go on the
// rest. dx must not overlap x or dy.
func geluGrad32(dx, x, dy []float32) {
	dx, dy = dx[:len(x)], dy[:len(x)]
	n := geluGradVec(dx, x, dy)
	geluGrad32Go(dx[n:], x[n:], dy[n:])
}

// geluGrad32Go is geluGrad32 in portable Go, in blocks as gelu32Go.
func geluGrad32Go(dx, x, dy []float32) {
	const invSqrt2Pi = 0.3989422804014327
	var z, e [fastBlock]float32
	dx, dy = dx[:len(x)], dy[:len(x)]
	for lo := 0; lo < len(x); lo += fastBlock {
		hi := min(lo+fastBlock, len(x))
		xb, dxb, dyb := x[lo:hi], dx[lo:hi], dy[lo:hi]
		zb, eb := z[:len(xb)], e[:len(xb)]
		for i, v := range xb {
			c := min(max(v, -geluFastMax), geluFastMax)
			zb[i] = c * (math.Sqrt2 / 2)
			eb[i] = -0.5 * c * c
		}
		erf32s(zb, zb)
		expNeg32sGo(eb, eb)
		for i, v := range xb {
			dxb[i] = dyb[i] * (0.5*(1+zb[i]) + v*invSqrt2Pi*eb[i])
		}
		geluGradOutside(dxb, xb, dyb)
	}
}

// geluGradOutside sets dx = dy * gelu'(x) with the exact float64 derivative where x is
// outside [-geluFastMax, geluFastMax] or NaN, and leaves the other elements.
func geluGradOutside(dx, x, dy []float32) {
	for i, v := range x {
		if !(v >= -geluFastMax && v <= geluFastMax) {
			dx[i] = float32(float64(dy[i]) * geluDeriv(float64(v)))
		}
	}
}
