package lipschitz

import "math"

// branchPoint is -1/e, the left end of the domain of the principal branch W_0.
const branchPoint = -1 / math.E

// LambertW0 returns W_0(x), the principal branch of the Lambert W function:
// the w >= -1 with w e^w = x. It is defined for x >= -1/e and returns NaN
// below that (and for NaN); LambertW0(+Inf) is +Inf.
//
// It starts from a series about the branch point, log1p(x), or the asymptotic
// expansion log x - log log x + log log x / log x, and refines by Halley's
// iteration to a relative error below 1e-12 for x >= 0. Near the branch point
// the problem is ill-conditioned and the accuracy degrades accordingly.
func LambertW0(x float64) float64 {
	switch {
	case math.IsNaN(x) || x < branchPoint:
		return math.NaN()
	case x == 0:
		return 0
	case math.IsInf(x, 1):
		return x
	}
	w := lambertStart(x)
	for range 100 {
		// Halley's step for f(w) = w e^w - x, with f and f' both divided by
		// e^w so that nothing overflows: t = f e^{-w}.
		t := w - x*math.Exp(-w)
		step := t / (w + 1 - (w+2)*t/(2*w+2))
		if math.IsNaN(step) {
			break
		}
		w -= step
		if math.Abs(step) <= 1e-15*math.Abs(w) {
			break
		}
	}
	return w
}

// lambertStart returns a starting point for Halley's iteration on W_0(x).
func lambertStart(x float64) float64 {
	switch {
	case x < -0.25:
		// Series in p = sqrt(2 (e x + 1)) about the branch point (-1/e, -1).
		p := math.Sqrt(math.Max(0, 2*(math.E*x+1)))
		return -1 + p - p*p/3 + 11.0/72*p*p*p
	case x < 3:
		return math.Log1p(x)
	default:
		l1 := math.Log(x)
		l2 := math.Log(l1)
		return l1 - l2 + l2/l1
	}
}

// PhiInv returns phi^{-1}(n-1) = W_0((n-1)/e), the inverse of
// phi(x) = x e^{x+1} evaluated at n-1, for a sequence of n >= 1 tokens. It is
// the N-dependent factor of the L2 attention bounds (docs/math.md, "Bounds of tied L2 attention").
//
// Note the argument n-1, not n: PhiInv(n) is W_0((n-1)/e), the exact form of
// Kim et al.'s theorem, not the W_0(n/e) some papers quote. PhiInv(1) = 0.
// It returns NaN for n < 1.
func PhiInv(n int) float64 {
	if n < 1 {
		return math.NaN()
	}
	return LambertW0(float64(n-1) / math.E)
}
