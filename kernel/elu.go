package kernel

import "math"

// ELU writes y = x for x > 0 and e^x - 1 otherwise, elementwise, in parallel chunks;
// float32 within 1 ulp of the exact value. y must not overlap x.
func ELU[T Float](y, x []T) { mapChunks(y, x, elu, elu32) }

// ELUGrad writes dx = dy * ELU'(x) elementwise (ELU'(x) = 1 for x > 0, e^x otherwise), in
// parallel chunks; float32 within 1e-7 relative, with a product below the smallest normal
// float32 (2^-126) flushed to 0 (eluGrad32). dx may be dy.
func ELUGrad[T Float](dx, x, dy []T) { chainChunks(dx, x, dy, eluDeriv, eluGrad32) }

// ELUSerial is ELU on the calling goroutine, for callers that already run one job per
// core; on the same chunks it computes the same values bit for bit.
func ELUSerial[T Float](y, x []T) { mapSerial(y, x, elu, elu32) }

// ELUGradSerial is ELUGrad on the calling goroutine.
func ELUGradSerial[T Float](dx, x, dy []T) { chainSerial(dx, x, dy, eluDeriv, eluGrad32) }

// roundsSubnormal32 is 2^-126 - 2^-150: a float64 of smaller magnitude rounds to a
// subnormal float32 (or 0), one of at least it to a normal float32 (2^-126 at the least).
const roundsSubnormal32 = 0x1p-126 - 0x1p-150

// elu is x for x > 0 and e^x - 1 otherwise.
func elu(x float64) float64 {
	if x > 0 {
		return x
	}
	return math.Expm1(x)
}

// eluDeriv is 1 for x > 0 and e^x otherwise.
func eluDeriv(x float64) float64 {
	if x > 0 {
		return 1
	}
	return math.Exp(x)
}

// elu32 writes y = elu(x) in float32, with e^x - 1 within 1 ulp (0.86 measured): the AVX2
// kernel where the processor has one, then elu32Go on the rest.
func elu32(y, x []float32) {
	y = y[:len(x)]
	n := eluVec(y, x)
	elu32Go(y[n:], x[n:])
}

// elu32Go is elu32 in portable Go, in blocks: expm1Neg32sGo on min(x, 0), then x where
// x > 0.
func elu32Go(y, x []float32) {
	var z [fastBlock]float32
	y = y[:len(x)]
	for lo := 0; lo < len(x); lo += fastBlock {
		xb, yb := x[lo:min(lo+fastBlock, len(x))], y[lo:min(lo+fastBlock, len(x))]
		zb := z[:len(xb)]
		expm1Neg32sGo(zb, xb)
		for i, v := range xb {
			if v > 0 {
				zb[i] = v
			}
		}
		copy(yb, zb)
	}
}

// eluGrad32 writes dx = dy * elu'(x) in float32, with e^x within 1e-7 relative: the AVX2
// kernel where the processor has one, then eluGrad32Go on the rest. dx may be dy.
//
// A product that rounds to a subnormal float32 (below 2^-126) is written as 0, and the
// product is taken so that no subnormal is ever formed: in float64 (exact) where it could
// be one. Such products are common once the inputs reach -60 and below (an MLP with a
// large gain: e^-80 times a gradient of 1e-6 is 2e-41), and every instruction that reads or
// writes a subnormal, this product and the matrix products it enters, takes a slow path
// on x86 processors (forming them makes this kernel 6 times slower); without the flush
// the invertible recipe's training step grows from 41 to 180 ms by step 800
// (docs/performance.md, "Subnormal gradients").
func eluGrad32(dx, x, dy []float32) {
	dx, dy = dx[:len(x)], dy[:len(x)]
	n := eluGradVec(dx, x, dy)
	eluGrad32Go(dx[n:], x[n:], dy[n:])
}

// eluGrad32Go is eluGrad32 in portable Go, in blocks: expNeg32sGo on x (positive x count
// as 0, so e^x = 1 there, elu's derivative).
func eluGrad32Go(dx, x, dy []float32) {
	var e [fastBlock]float32
	dx, dy = dx[:len(x)], dy[:len(x)]
	for lo := 0; lo < len(x); lo += fastBlock {
		hi := min(lo+fastBlock, len(x))
		xb, dxb, dyb := x[lo:hi], dx[lo:hi], dy[lo:hi]
		eb := e[:len(xb)]
		expNeg32sGo(eb, xb)
		for i, d := range eb {
			v := float64(dyb[i]) * float64(d) // exact, never subnormal; rounded once below
			if math.Abs(v) < roundsSubnormal32 {
				v = 0
			}
			dxb[i] = float32(v)
		}
	}
}
