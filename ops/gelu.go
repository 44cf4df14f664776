package ops

import (
	"math"

	G "gorgonia.org/gorgonia"
)

// GELU is the exact Gaussian error linear unit x * Phi(x), Phi the standard normal CDF
// (PyTorch's default, not the tanh approximation). Its Lipschitz constant is about 1.129.
func GELU(x *G.Node) (*G.Node, error) { return pointwise{"GELU", gelu, geluDeriv}.apply(x) }

// gelu is x Phi(x).
func gelu(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

// geluDeriv is Phi(x) + x phi(x).
func geluDeriv(x float64) float64 {
	const invSqrt2Pi = 0.3989422804014327
	return 0.5*(1+math.Erf(x/math.Sqrt2)) + x*invSqrt2Pi*math.Exp(-0.5*x*x)
}
