package ops

import (
	"math"

	G "gorgonia.org/gorgonia"
)

// ELU is the exponential linear unit with alpha = 1: x for x > 0, e^x - 1 otherwise. Its
// derivative lies in (0, 1], so it is 1-Lipschitz, and it is continuously differentiable:
// the activation of the spectrally normalised MLP of invertible blocks (SPEC section 3).
func ELU(x *G.Node) (*G.Node, error) { return eluFn().apply(x) }

// eluFn is ELU as a pointwise function, for the op and for ELUInto.
func eluFn() pointwise { return pointwise{"ELU", elu, eluDeriv, nil, nil} }

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
