package layers

import (
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/lipschitz"
	"lipformer/ops"
)

// MLP is Linear(D, hidden), GELU, Linear(hidden, D), with biases.
type MLP struct {
	Fc   *Linear // (D, hidden)
	Proj *Linear // (hidden, D)
}

// NewMLP makes an MLP with weights drawn from N(0, std^2); the output projection uses
// projStd (GPT-2 scales it down with depth).
func NewMLP(name string, d, hidden int, std, projStd float64, dt tensor.Dtype, rng *rand.Rand) *MLP {
	return &MLP{
		Fc:   NewLinear(name+".fc", d, hidden, true, std, dt, rng),
		Proj: NewLinear(name+".proj", hidden, d, true, projStd, dt, rng),
	}
}

// Forward maps x (N, D) to (N, D).
func (m *MLP) Forward(g *Graph, x *G.Node) (*G.Node, error) {
	h, err := m.Fc.Forward(g, x) // (N, hidden)
	if err != nil {
		return nil, err
	}
	if h, err = ops.GELU(h); err != nil {
		return nil, err
	}
	return m.Proj.Forward(g, h)
}

// Lipschitz2 is the product bound ||W_fc||_2 * Lip(GELU) * ||W_proj||_2 on one row.
func (m *MLP) Lipschitz2() float64 {
	return m.Fc.Lipschitz2() * lipschitz.GELULip * m.Proj.Lipschitz2()
}

// LipschitzInf is the product bound ||W_fc^T||_inf * Lip(GELU) * ||W_proj^T||_inf.
func (m *MLP) LipschitzInf() float64 {
	return m.Fc.LipschitzInf() * lipschitz.GELULip * m.Proj.LipschitzInf()
}

// residualStd is GPT-2's initial scale of projections into the residual stream.
func residualStd(std float64, layers int) float64 { return std / math.Sqrt(2*float64(layers)) }

// Params returns the two layers' weights and biases in the order Forward uses them.
func (m *MLP) Params() []*Param { return append(m.Fc.Params(), m.Proj.Params()...) }
