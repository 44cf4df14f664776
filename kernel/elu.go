package kernel

import "math"

// ELU writes y = x for x > 0 and e^x - 1 otherwise, elementwise, in parallel chunks;
// float32 within 1 ulp of the exact value. y may be x.
func ELU[T Float](y, x []T) { mapChunks(y, x, elu, elu32) }

// ELUGrad writes dx = dy * ELU'(x) elementwise from the output y = ELU(x), in parallel
// chunks: ELU'(x) is 1 where y > 0 and y + 1 (= e^x) otherwise, so the backward needs
// neither x nor an exponential. The factor y + 1 is rounded at the spacing of the
// floats at 1: in float32 it is within 6e-8 of e^x (an absolute error, 0.1% of e^x at
// x = -10), and 0 where y rounds to -1, below x = -17.3 (-37.4 in float64); a float32
// product below the smallest normal float32 (2^-126) is written as 0 (eluGrad32). dx may
// be dy.
func ELUGrad[T Float](dx, y, dy []T) { chainChunks(dx, y, dy, eluDerivOfOutput, eluGrad32) }

// ELUSerial is ELU on the calling goroutine, for callers that already run one job per
// core; on the same chunks it computes the same values bit for bit.
func ELUSerial[T Float](y, x []T) { mapSerial(y, x, elu, elu32) }

// ELUGradSerial is ELUGrad on the calling goroutine.
func ELUGradSerial[T Float](dx, y, dy []T) { chainSerial(dx, y, dy, eluDerivOfOutput, eluGrad32) }

// elu is x for x > 0 and e^x - 1 otherwise.
func elu(x float64) float64 {
	if x > 0 {
		return x
	}
	return math.Expm1(x)
}

// eluDerivOfOutput is ELU's derivative at x given y = elu(x): 1 for y > 0 and y + 1
// otherwise (NaN for NaN).
func eluDerivOfOutput(y float64) float64 { return min(y, 0) + 1 }

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

// eluGrad32 writes dx = dy * (min(y, 0) + 1) in float32 from ELU's output y, the product
// rounded once and written as 0 where it is subnormal (below 2^-126): the AVX2 kernel where
// the processor has one, then eluGrad32Go on the rest. dx may be dy.
//
// Subnormal products are common in deep negative units (an MLP with a large gain: a factor
// of e^-80 times a gradient of 1e-6 is 2e-41), and every instruction that reads or writes
// a subnormal, this product and the matrix products it enters, takes a slow path on x86
// processors: without the flush the invertible recipe's training step grew from 41 to 180
// ms by step 800 (docs/performance.md, "Subnormal gradients"). The factor is 0 or at least
// 2^-24, so the product itself is subnormal only for |dy| < 2^-102.
func eluGrad32(dx, y, dy []float32) {
	dx, dy = dx[:len(y)], dy[:len(y)]
	n := eluGradVec(dx, y, dy)
	eluGrad32Go(dx[n:], y[n:], dy[n:])
}

// eluGrad32Go is eluGrad32 in portable Go.
func eluGrad32Go(dx, y, dy []float32) {
	dx, dy = dx[:len(y)], dy[:len(y)]
	for i, v := range y {
		p := dy[i] * (min(v, 0) + 1)
		if p > -0x1p-126 && p < 0x1p-126 {
			p = 0
		}
		dx[i] = p
	}
}
