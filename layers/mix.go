package layers

import (
	"fmt"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/ops"
)

// Mix is the branch of a mixing sub-block (docs/math.md, "The mixing sub-block"): each
// token takes a learned convex combination of itself and the k-1 tokens before it, then a
// linear map, g(x) = CausalMix(x; softmax(r)) W' + b. In an invertible block W' = c W /
// sigma (spectral normalisation), so the branch is c-Lipschitz in the token norm and in the
// 2-norm of the sequence; elsewhere W' = W. Its inf-norm constant is that of W', not c.
type Mix struct {
	Taps *Param        // (k) logits r of the taps a = softmax(r); not decayed
	Lin  *Linear       // W (D, D) and b (D)
	SN   *SpectralNorm // the normalisation of W in an invertible block, or nil
	C    float64       // c, with SN
}

// NewMix makes the branch of k taps, starting at equal taps 1/k, with W drawn from
// N(0, std^2); with c > 0 W is spectrally normalised and scaled by c.
func NewMix(name string, d, k int, c, std float64, dt tensor.Dtype, rng *rand.Rand) (*Mix, error) {
	if k < 1 || d < 1 {
		return nil, fmt.Errorf("%s: %d taps on width %d, want both >= 1", name, k, d)
	}
	taps := newParam(name+".taps", dt, false, k)
	taps.LRScale = scalarLR
	m := &Mix{Taps: taps, Lin: NewLinear(name+".proj", d, d, true, std, dt, rng)}
	if c > 0 {
		m.SN, m.C = NewSpectralNorm(m.Lin.W, rng), c
	}
	return m, nil
}

// Forward maps x (B*T, D) to (B*T, D).
func (m *Mix) Forward(g *Graph, x *G.Node) (*G.Node, error) {
	y, err := ops.CausalMix(x, g.Node(m.Taps), g.SeqLen) // (B*T, D)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Taps.Name, err)
	}
	w, err := m.Weight(g)
	if err != nil {
		return nil, err
	}
	return m.Lin.apply(g, y, w)
}

// Weight adds to g the weight the branch applies, W' (D, D).
func (m *Mix) Weight(g *Graph) (*G.Node, error) {
	if m.SN == nil {
		return g.Node(m.Lin.W), nil
	}
	return m.SN.Weight(g, m.C)
}

// Scale is the factor W' / W: c / sigma, or 1 without spectral normalisation.
func (m *Mix) Scale() float64 {
	if m.SN == nil {
		return 1
	}
	return m.C / m.SN.Sigma()
}

// Lipschitz2 is the branch's exact constant in the token norm and the sequence's 2-norm,
// ||W'||_2: the mix is a convex combination of tokens, of constant 1 in both.
func (m *Mix) Lipschitz2() float64 { return m.Scale() * m.Lin.Lipschitz2() }

// LipschitzInf is the branch's exact constant in the sequence's inf-norm, ||W'^T||_inf.
func (m *Mix) LipschitzInf() float64 { return m.Scale() * m.Lin.LipschitzInf() }

// Params returns the taps, W and b: the order Forward uses them.
func (m *Mix) Params() []*Param { return nonNil(m.Taps, m.Lin.W, m.Lin.B) }

// SpectralNorms returns W's normalisation, or nothing outside invertible blocks.
func (m *Mix) SpectralNorms() []*SpectralNorm {
	if m.SN == nil {
		return nil
	}
	return []*SpectralNorm{m.SN}
}
