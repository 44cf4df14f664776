package layers

import (
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/ops"
)

// SpectralMLP is the branch of an invertible MLP sub-block (docs/math.md, "Contraction and inversion"):
// g(x) = act(x W1/sigma1 + b1) (c W2/sigma2) + b2, each weight divided by its spectral
// norm estimate, act a 1-Lipschitz activation (ELU, or MaxMin: Act), times c. It acts on each token alone and is
// C ||W1||_2/sigma1 ||W2||_2/sigma2-Lipschitz (about c) in the token's 2-norm.
//
// With LogGain s the branch is g(x) = ELU(x e^s W1/sigma1 + b1) (c e^-s W2/sigma2) + b2,
// that is h(e^s x)/e^s for the branch h without it: the same Lipschitz constant at every
// s, while s sets the scale at which the activation bends (docs/math.md, "MLP gain").
type SpectralMLP struct {
	Fc      *SpectralLinear // (D, hidden), C = 1
	Proj    *SpectralLinear // (hidden, D), C = c
	LogGain *Param          // (1) log input gain s, or nil for none
	Act     ops.Activation  // ELU (the zero value) or MaxMin
}

// NewSpectralMLP makes the branch with weights drawn from N(0, std^2) and zero biases.
func NewSpectralMLP(name string, d, hidden int, c, std float64, dt tensor.Dtype, rng *rand.Rand) *SpectralMLP {
	return &SpectralMLP{
		Fc:   NewSpectralLinear(name+".fc", d, hidden, 1, std, dt, rng),
		Proj: NewSpectralLinear(name+".proj", hidden, d, c, std, dt, rng),
	}
}

// AddGain gives the branch a learned log input gain s, initialised to s0, not decayed, and
// trained at scalarLR times the learning rate.
func (m *SpectralMLP) AddGain(name string, s0 float64) {
	m.LogGain = newParam(name+".loggain", m.Fc.W.Value.Dtype(), false, 1)
	m.LogGain.fill(s0)
	m.LogGain.LRScale = scalarLR
}

// Weights adds to g the two weights the branch applies: e^s W1/sigma1 (D, hidden) and
// c e^-s W2/sigma2 (hidden, D), without the gain factors when LogGain is nil.
func (m *SpectralMLP) Weights(g *Graph) (fc, proj *G.Node, err error) {
	if fc, err = m.Fc.SN.Weight(g, m.Fc.C); err != nil {
		return nil, nil, err
	}
	if proj, err = m.Proj.SN.Weight(g, m.Proj.C); err != nil {
		return nil, nil, err
	}
	if m.LogGain == nil {
		return fc, proj, nil
	}
	s := g.Node(m.LogGain)
	if fc, err = ops.HeadScale(fc, s, 1); err != nil {
		return nil, nil, err
	}
	proj, err = ops.HeadScale(proj, s, -1)
	return fc, proj, err
}

// Forward maps x (N, D) to (N, D).
func (m *SpectralMLP) Forward(g *Graph, x *G.Node) (*G.Node, error) {
	fc, proj, err := m.Weights(g)
	if err != nil {
		return nil, err
	}
	h, err := m.Fc.apply(g, x, fc) // (N, hidden)
	if err != nil {
		return nil, err
	}
	if h, err = m.Act.Apply(h); err != nil {
		return nil, err
	}
	return m.Proj.apply(g, h, proj)
}

// Residual maps x (N, D) to the sub-block's output x + g(x) (N, D): the same values as
// Add(x, Forward(x)), in one op, ops.SpectralMLPResidual with a gain (which makes the
// weights in the op) and ops.MLPResidual of Weights without one.
func (m *SpectralMLP) Residual(g *Graph, x *G.Node) (*G.Node, error) {
	if m.LogGain != nil {
		fc, proj, s := m.Fc.spectralWeight(g), m.Proj.spectralWeight(g), g.Node(m.LogGain) // in Params' order
		return ops.SpectralMLPResidual(x, fc, g.Node(m.Fc.B), proj, g.Node(m.Proj.B), s, m.Act)
	}
	fc, proj, err := m.Weights(g)
	if err != nil {
		return nil, err
	}
	return ops.MLPResidual(x, fc, g.Node(m.Fc.B), proj, g.Node(m.Proj.B), m.Act)
}

// Lipschitz2 is the certified 2-norm Lipschitz constant on one token: the product of the
// two layers' exact constants (ELU and MaxMin are 1-Lipschitz; the gain factors e^s and e^-s cancel).
func (m *SpectralMLP) Lipschitz2() float64 { return m.Fc.Lipschitz2() * m.Proj.Lipschitz2() }

// Params returns the parameters in the order Forward uses them: the two weights (Weights),
// the log gain when present, the two biases.
func (m *SpectralMLP) Params() []*Param { return nonNil(m.Fc.W, m.Proj.W, m.LogGain, m.Fc.B, m.Proj.B) }

// SpectralNorms returns the normalisations of the two weights.
func (m *SpectralMLP) SpectralNorms() []*SpectralNorm { return []*SpectralNorm{m.Fc.SN, m.Proj.SN} }
