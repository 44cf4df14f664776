package ops

import (
	G "gorgonia.org/gorgonia"

	"lipformer/kernel"
)

// ELU is the exponential linear unit with alpha = 1: x for x > 0, e^x - 1 otherwise. Its
// derivative lies in (0, 1], so it is 1-Lipschitz, and it is continuously differentiable:
// the activation of the spectrally normalised MLP of invertible blocks (docs/math.md,
// "Contraction and inversion"). It is computed by kernel.ELU and kernel.ELUGrad, whose
// backward reads the derivative from the output (1 where y > 0, y + 1 = e^x otherwise: a
// computed factor in [0, 1], 0 where y rounds to -1).
func ELU(x *G.Node) (*G.Node, error) {
	return pointwise{"ELU", kernel.ELU[float32], kernel.ELU[float64], kernel.ELUGrad[float32], kernel.ELUGrad[float64], true}.apply(x)
}
