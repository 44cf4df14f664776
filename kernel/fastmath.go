package kernel

import "math"

// Float32 kernels of the hot elementwise functions, in portable Go and, on amd64 processors
// with AVX2 and FMA, in assembly (fastmath_amd64.s) for all but the last few elements. They
// compute in float32 throughout, as loops over slices (docs/performance.md, "AVX2 row
// kernels").

// fastBlock is the length of the stack buffers the kernels pass to the slice functions.
const fastBlock = 256

// expNeg32s writes e^x for each x <= 0 of src into dst (len(src) elements; dst may be
// src), within 1.5 float32 ulps (relative error below 1e-7); 0 below -87.3, where e^x is
// no longer a normal float32; NaN for NaN; positive x count as 0. It is Cephes' expf:
// n = round(x log2 e) by the 1.5 * 2^23 shifter (no integer conversion), a degree-5
// polynomial on x - n ln 2, and 2^n put in the exponent bits. Cross-entropy calls it on
// max-shifted logits; the softmax row and GELU's derivative run its computation in their
// own AVX2 kernels (the EXP macro) and expNeg32sGo on what those leave. It runs the
// AVX2 kernel (fastmath_amd64.s) where the processor has one, and expNeg32sGo on the rest.
func expNeg32s(dst, src []float32) {
	dst = dst[:len(src)]
	n := expNegVec(dst, src)
	expNeg32sGo(dst[n:], src[n:])
}

// expNeg32sGo is expNeg32s in portable Go.
func expNeg32sGo(dst, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		if !(x >= -87.3) {
			if x != x {
				dst[i] = x
			} else {
				dst[i] = 0
			}
			continue
		}
		u, s := expReduce32(x)
		dst[i] = (u + 1) * s
	}
}

// expReduce32 splits e^x for -87.3 <= x (positive x count as 0) into 2^n (1 + u): s = 2^n
// with n = round(x log2 e) in [-126, 0], and u = e^r - 1 for r = x - n ln 2 in
// [-ln2/2, ln2/2], from a degree-5 polynomial (the kernels' EXPREDUCE).
func expReduce32(x float32) (u, s float32) {
	const log2e, ln2hi, ln2lo = 1.44269504088896341, 0.693359375, -2.12194440e-4
	const shifter = 0x1.8p23 // adding it rounds |t| < 2^22 to an integer, held in the low bits
	if x > 0 {
		x = 0
	}
	t := x*log2e + shifter
	n := t - shifter
	r := x - n*ln2hi - n*ln2lo
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	e := int32(math.Float32bits(t) - math.Float32bits(shifter)) // n as an integer
	return p*r*r + r, math.Float32frombits(uint32(e+127) << 23)
}

// expm1Neg32sGo writes e^x - 1 for each x <= 0 of src into dst (len(src) elements; dst
// may be src), within 1 float32 ulp of the result: -1 below -87.3, NaN for NaN, positive
// x count as 0. It is expNeg32sGo's reduction, e^x = 2^n (1 + u) with u = e^r - 1 from the
// same polynomial, and e^x - 1 = 2^n u + (2^n - 1): for n = 0 that is u itself, with full
// relative accuracy near 0 where e^x - 1 computed as a difference would cancel; otherwise
// |e^x - 1| > 0.29 and neither term cancels. ELU calls it.
func expm1Neg32sGo(dst, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		if !(x >= -87.3) {
			if x != x {
				dst[i] = x
			} else {
				dst[i] = -1
			}
			continue
		}
		u, s := expReduce32(x)
		dst[i] = u*s + (s - 1)
	}
}

// erf32s writes erf(x) for each x of src into dst (len(src) elements; dst may be src),
// within 3e-7 absolute (5 float32 ulps of 1) for |x| <= 2.2 and 4e-7 up to |x| = 4 (it
// must not be called beyond): Eigen's rational approximation for float32, an odd
// numerator of degree 13 over an even denominator of degree 8. GELU's float32 kernels
// call it on x/sqrt(2) with |x| <= geluFastMax.
func erf32s(dst, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		x2 := x * x
		p := float32(-2.72614225801306e-10)
		p = p*x2 + 2.77068142495902e-08
		p = p*x2 - 2.10102402082508e-06
		p = p*x2 - 5.69250639462346e-05
		p = p*x2 - 7.34990630326855e-04
		p = p*x2 - 2.95459980854025e-03
		p = p*x2 - 1.60960333262415e-02
		q := float32(-1.45660718464996e-05)
		q = q*x2 - 2.13374055278905e-04
		q = q*x2 - 1.68282697438203e-03
		q = q*x2 - 7.37332916720468e-03
		q = q*x2 - 1.42647390514189e-02
		dst[i] = x * p / q
	}
}
