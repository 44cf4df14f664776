package ops

import (
	G "gorgonia.org/gorgonia"

	"lipformer/kernel"
)

// GELU is the exact Gaussian error linear unit x * Phi(x), Phi the standard normal CDF
// (PyTorch's default, not the tanh approximation). Its Lipschitz constant is about 1.129.
// In float32 it is computed in float32 arithmetic with a rational erf and a polynomial exp
// (Phi and Phi' within 3e-7 absolute, as PyTorch's float32 kernel), in float64 with
// math.Erf: kernel.GELU and kernel.GELUGrad.
func GELU(x *G.Node) (*G.Node, error) {
	return pointwise{"GELU", kernel.GELU[float32], kernel.GELU[float64], kernel.GELUGrad[float32], kernel.GELUGrad[float64], false}.apply(x)
}
