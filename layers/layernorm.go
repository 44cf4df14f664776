package layers

import (
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/lipschitz"
	"lipformer/ops"
)

// LayerNorm normalises each row over its D features, with a learned gain and bias.
type LayerNorm struct {
	Gain *Param // (D), initialised to 1
	Bias *Param // (D), initialised to 0
	Eps  float64
}

// NewLayerNorm makes a LayerNorm of width d with eps 1e-5.
func NewLayerNorm(name string, d int, dt tensor.Dtype) *LayerNorm {
	ln := &LayerNorm{Gain: newParam(name+".gain", dt, false, d), Bias: newParam(name+".bias", dt, false, d), Eps: 1e-5}
	ln.Gain.fill(1)
	return ln
}

// Forward normalises x (N, D).
func (ln *LayerNorm) Forward(g *Graph, x *G.Node) (*G.Node, error) {
	return ops.LayerNorm(x, g.Node(ln.Gain), g.Node(ln.Bias), ln.Eps)
}

// Lipschitz2 is max|gain| / sqrt(eps), attained at constant inputs (docs/math.md, "Bounds of tied L2 attention").
func (ln *LayerNorm) Lipschitz2() (float64, error) {
	return lipschitz.LayerNormLip2(ln.Gain.Float64s(), ln.Eps)
}

// LipschitzInf is max|gain| / sqrt(eps) * (2D-2)/D.
func (ln *LayerNorm) LipschitzInf() (float64, error) {
	return lipschitz.LayerNormLipInf(ln.Gain.Float64s(), ln.Eps)
}

// Params returns the gain and the bias.
func (l *LayerNorm) Params() []*Param { return []*Param{l.Gain, l.Bias} }
