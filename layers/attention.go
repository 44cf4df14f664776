package layers

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/lipschitz"
	"lipformer/ops"
)

// Attention is multihead self-attention without biases (SPEC sections 1-2): per head h,
// queries X W^{Q,h}, keys X W^{K,h}, values, P = softmax(logits), head_h = P values,
// F(X) = [head_1, ..., head_H] W^O. Head h uses columns h*d..(h+1)*d of each (D, D) map.
//   - dp: logits Q K^T / sqrt(d), values X W^{V,h}.
//   - l2: keys tied to queries (WK unused, nil), logits -||q_i - q_j||^2 / sqrt(d), values
//     X A_h W^{V,h} with A_h = W^{Q,h} W^{Q,h}^T / sqrt(d). Lipschitz.
//   - l2-untied: logits -||q_i - k_j||^2 / sqrt(d), values X W^{V,h}. Not Lipschitz.
//
// With LipC = c > 0 (tied L2 only) the layer is contractive L2 (SPEC section 3): its output
// is scaled by min(1, c / UB_inf), the inf-norm bound for sequences of BoundLen tokens
// computed from the current weights and differentiated through.
type Attention struct {
	Kind     ops.AttentionKind
	Heads    int
	Causal   bool
	LipC     float64 // c of contractive L2, or 0
	BoundLen int     // N of the contractive bound: the model's context
	WQ       *Param  // (D, D)
	WK       *Param  // (D, D); nil for tied L2
	WV       *Param  // (D, D)
	WO       *Param  // (D, D)
}

// NewAttention makes an attention layer of width d with weights drawn from N(0, std^2) and
// the output map from N(0, projStd^2).
func NewAttention(name string, kind ops.AttentionKind, d, heads int, causal bool, std, projStd float64, dt tensor.Dtype, rng *rand.Rand) (*Attention, error) {
	if heads < 1 || d%heads != 0 {
		return nil, fmt.Errorf("%s: width %d is not a multiple of %d heads", name, d, heads)
	}
	a := &Attention{Kind: kind, Heads: heads, Causal: causal,
		WQ: newParam(name+".wq", dt, true, d, d), WV: newParam(name+".wv", dt, true, d, d), WO: newParam(name+".wo", dt, true, d, d)}
	if kind != ops.L2 {
		a.WK = newParam(name+".wk", dt, true, d, d)
	}
	for _, p := range []*Param{a.WQ, a.WK, a.WV} {
		if p != nil {
			p.fillNormal(rng, std)
		}
	}
	a.WO.fillNormal(rng, projStd)
	return a, nil
}

// Params returns the layer's parameters.
func (a *Attention) Params() []*Param {
	if a.WK == nil {
		return []*Param{a.WQ, a.WV, a.WO}
	}
	return []*Param{a.WQ, a.WK, a.WV, a.WO}
}

// Forward maps x (B*T, D) to (B*T, D).
func (a *Attention) Forward(g *Graph, x *G.Node) (*G.Node, error) {
	return a.forward(g, x, paramNode(g))
}

// forward is Forward with the value and output maps WV and WO replaced by weight(WV) and
// weight(WO) (D, D): the parameters' nodes, or weights computed from them.
func (a *Attention) forward(g *Graph, x *G.Node, weight func(*Param) (*G.Node, error)) (*G.Node, error) {
	w, err := a.weights(g, weight)
	if err != nil {
		return nil, err
	}
	if x.Dims() != 2 || x.Shape()[1] != w.WQ.Shape()[0] || x.Shape()[0] != g.Rows() {
		return nil, fmt.Errorf("%s: input %v, want (%d, %d)", a.WQ.Name, x.Shape(), g.Rows(), w.WQ.Shape()[0])
	}
	blocks := G.Nodes{w.WQ, w.WK, w.WV}
	if a.Kind == ops.L2 { // X W^Q and every head's X A_h W^{V,h}, in one product
		weff, err := ops.L2Values(w.WQ, w.WV, a.Heads) // (D, D)
		if err != nil {
			return nil, err
		}
		blocks = G.Nodes{w.WQ, weff}
	}
	packed, err := ops.Linear(x, nil, blocks...) // (B*T, k*D)
	if err != nil {
		return nil, err
	}
	heads, err := ops.Attention(packed, ops.AttentionSpec{Kind: a.Kind, Heads: a.Heads, SeqLen: g.SeqLen, Causal: a.Causal})
	if err != nil {
		return nil, err
	}
	out, err := ops.Linear(heads, nil, w.WO) // (B*T, D)
	if err != nil || w.Bound == nil {
		return out, err
	}
	return ops.Contract(out, w.Bound, a.LipC)
}

// AttnWeights are the matrices an attention layer applies, as nodes of a graph, (D, D)
// each. The layer projects its input by [W^Q | W^K | W^V], or for tied L2 by
// [W^Q | L2Values(W^Q, W^V)].
type AttnWeights struct {
	WQ, WK *G.Node // WK is nil for tied L2, whose keys are its queries
	WV, WO *G.Node // as applied: the parameters, or weights computed from them
	// Bound is the scalar UB_inf of a contractive layer, whose output is scaled by
	// min(1, LipC / Bound) (ops.Contract); nil otherwise.
	Bound *G.Node
}

// Weights adds to g the weights the layer applies: what an incremental decoder needs to
// compute Forward one row at a time.
func (a *Attention) Weights(g *Graph) (AttnWeights, error) { return a.weights(g, paramNode(g)) }

// weights is Weights with WV and WO replaced by weight(WV) and weight(WO), as in forward.
func (a *Attention) weights(g *Graph, weight func(*Param) (*G.Node, error)) (AttnWeights, error) {
	wq := g.Node(a.WQ)
	wv, err := weight(a.WV)
	if err != nil {
		return AttnWeights{}, err
	}
	w := AttnWeights{WQ: wq, WV: wv}
	if a.Kind != ops.L2 {
		if a.WK == nil {
			return AttnWeights{}, fmt.Errorf("%s: %v attention needs a key map", a.WQ.Name, a.Kind)
		}
		w.WK = g.Node(a.WK)
	}
	if w.WO, err = weight(a.WO); err != nil || a.LipC == 0 {
		return w, err
	}
	if a.Kind != ops.L2 || a.BoundLen < 1 {
		return AttnWeights{}, fmt.Errorf("%s: contractive attention needs tied L2 and a bound length, got %v and %d", a.WQ.Name, a.Kind, a.BoundLen)
	}
	w.Bound, err = ops.L2BoundInf(wq, wv, w.WO, a.Heads, lipschitz.PhiInv(a.BoundLen))
	return w, err
}

// paramNode is the weight function of a layer that applies its parameters as they are.
func paramNode(g *Graph) func(*Param) (*G.Node, error) {
	return func(p *Param) (*G.Node, error) { return g.Node(p), nil }
}

// LipschitzInf is the inf-norm upper bound of SPEC section 2 for sequences of n tokens
// (tied L2 only), times the contractive scale; dp and l2-untied return
// lipschitz.ErrNotLipschitz.
func (a *Attention) LipschitzInf(n int) (float64, error) {
	wq, wv, wo, err := a.boundWeights()
	if err != nil {
		return 0, err
	}
	ub, err := lipschitz.L2MHABoundInf(n, wq, wv, wo)
	if err != nil {
		return 0, err
	}
	s, err := a.scale(wq, wv, wo)
	return s * ub, err
}

// Lipschitz2 is the 2-norm upper bound of SPEC section 2 for sequences of n tokens (tied
// L2 only), times the contractive scale; dp and l2-untied return lipschitz.ErrNotLipschitz.
func (a *Attention) Lipschitz2(n int) (float64, error) {
	wq, wv, wo, err := a.boundWeights()
	if err != nil {
		return 0, err
	}
	ub, err := lipschitz.L2MHABound2(n, wq, wv, wo)
	if err != nil {
		return 0, err
	}
	s, err := a.scale(wq, wv, wo)
	return s * ub, err
}

// scale is the contractive factor min(1, c / UB_inf(BoundLen)), or 1 for plain attention.
func (a *Attention) scale(wq, wv []*mat.Dense, wo *mat.Dense) (float64, error) {
	if a.LipC == 0 {
		return 1, nil
	}
	ub, err := lipschitz.L2MHABoundInf(a.BoundLen, wq, wv, wo)
	if err != nil {
		return 0, err
	}
	return min(1, a.LipC/ub), nil
}

// boundWeights returns the per-head query and value maps and W^O of a tied L2 layer.
func (a *Attention) boundWeights() (wq, wv []*mat.Dense, wo *mat.Dense, err error) {
	if a.Kind != ops.L2 {
		return nil, nil, nil, fmt.Errorf("%s (%v attention): %w", a.WQ.Name, a.Kind, lipschitz.ErrNotLipschitz)
	}
	if wq, err = lipschitz.HeadSlices(denseOf(a.WQ), a.Heads); err != nil {
		return nil, nil, nil, err
	}
	if wv, err = lipschitz.HeadSlices(denseOf(a.WV), a.Heads); err != nil {
		return nil, nil, nil, err
	}
	return wq, wv, denseOf(a.WO), nil
}
