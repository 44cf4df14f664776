package layers

import (
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/ops"
)

// SpectralMLP is the branch of an invertible MLP sub-block (docs/math.md, "Contraction and inversion"):
// g(x) = ELU(x W1/sigma1 + b1) (c W2/sigma2) + b2, each weight divided by its spectral
// norm estimate, a 1-Lipschitz activation, times c. It acts on each token alone and is
// C ||W1||_2/sigma1 ||W2||_2/sigma2-Lipschitz (about c) in the token's 2-norm.
type SpectralMLP struct {
	Fc   *SpectralLinear // (D, hidden), C = 1
	Proj *SpectralLinear // (hidden, D), C = c
}

// NewSpectralMLP makes the branch with weights drawn from N(0, std^2) and zero biases.
func NewSpectralMLP(name string, d, hidden int, c, std float64, dt tensor.Dtype, rng *rand.Rand) *SpectralMLP {
	return &SpectralMLP{
		Fc:   NewSpectralLinear(name+".fc", d, hidden, 1, std, dt, rng),
		Proj: NewSpectralLinear(name+".proj", hidden, d, c, std, dt, rng),
	}
}

// Forward maps x (N, D) to (N, D).
func (m *SpectralMLP) Forward(g *Graph, x *G.Node) (*G.Node, error) {
	h, err := m.Fc.Forward(g, x) // (N, hidden)
	if err != nil {
		return nil, err
	}
	if h, err = ops.ELU(h); err != nil {
		return nil, err
	}
	return m.Proj.Forward(g, h)
}

// Lipschitz2 is the certified 2-norm Lipschitz constant on one token: the product of the
// two layers' exact constants (ELU is 1-Lipschitz).
func (m *SpectralMLP) Lipschitz2() float64 { return m.Fc.Lipschitz2() * m.Proj.Lipschitz2() }

// Params returns the weights and biases.
func (m *SpectralMLP) Params() []*Param { return []*Param{m.Fc.W, m.Fc.B, m.Proj.W, m.Proj.B} }

// SpectralNorms returns the normalisations of the two weights.
func (m *SpectralMLP) SpectralNorms() []*SpectralNorm { return []*SpectralNorm{m.Fc.SN, m.Proj.SN} }
