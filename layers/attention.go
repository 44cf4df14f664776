package layers

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/lipschitz"
	"lipformer/ops"
)

// Attention is multihead self-attention without biases (docs/math.md, "Attention"): per head h,
// queries X W^{Q,h}, keys X W^{K,h}, values, P = softmax(logits), head_h = P values,
// F(X) = [head_1, ..., head_H] W^O. Head h uses columns h*d..(h+1)*d of each (D, D) map.
//   - dp: logits Q K^T / sqrt(d), values X W^{V,h}.
//   - l2: keys tied to queries (WK unused, nil), logits -||q_i - q_j||^2 / sqrt(d), values
//     X A_h W^{V,h} with A_h = W^{Q,h} W^{Q,h}^T / sqrt(d). Lipschitz.
//   - l2-untied: logits -||q_i - k_j||^2 / sqrt(d), values X W^{V,h}. Not Lipschitz.
//
// With LipC = c > 0 (tied L2 only) the layer is contractive L2 (docs/math.md, "Contraction
// and inversion"): its output is scaled by min(1, c / UB), UB the bound of form Bound (in
// the inf-norm for kim and product, in the token norm for token2) for sequences of BoundLen
// tokens, computed from the current weights and differentiated through.
//
// With LogTemp (tied L2 only) head h applies W^{Q,h} exp(s_h) and W^{V,h} exp(-2 s_h): its
// logits scale by exp(2 s_h) and its value path A_h W^{V,h} stays. The product bound is
// the same at either weights, and the token2 bound is taken at the weights before the
// temperatures, which bounds the layer at every temperature (docs/math.md, "Temperature").
type Attention struct {
	Kind     ops.AttentionKind
	Heads    int
	Causal   bool
	LipC     float64       // c of contractive L2, or 0
	BoundLen int           // N of the contractive bound: the model's context
	Bound    ops.BoundForm // the bound a contractive layer divides by
	WQ       *Param        // (D, D)
	WK       *Param        // (D, D); nil for tied L2
	WV       *Param        // (D, D)
	WO       *Param        // (D, D)
	LogTemp  *Param        // (H) per-head log-temperature s of tied L2, or nil
	Power    *AttnPower    // the power-iteration vectors of Bound BoundTok2, or nil
	// PosBias (H, T), causal tied L2 only: head h's logit of row i, column j <= i gains
	// PosBias[h, i-j]; nil for none. A contractive layer with one divides by the
	// token2 bound: the differentiable kim and product ops take no bias.
	PosBias *Param
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

// AddTemperature gives a tied L2 layer per-head log-temperatures s, initialised to 0 (the
// layer's function is unchanged until they are trained), not decayed, and trained at
// scalarLR times the learning rate.
func (a *Attention) AddTemperature(name string) error {
	if a.Kind != ops.L2 {
		return fmt.Errorf("%s: a temperature needs tied L2 attention, not %v", name, a.Kind)
	}
	a.LogTemp = newParam(name+".logtemp", a.WQ.Value.Dtype(), false, a.Heads)
	a.LogTemp.LRScale = scalarLR
	return nil
}

// AddPositionBias gives a causal tied L2 layer a learned position bias over t relative
// offsets, initialised to 0 (the layer's function is unchanged until it is trained), not
// decayed, and trained at scalarLR times the learning rate.
func (a *Attention) AddPositionBias(name string, t int) error {
	if a.Kind != ops.L2 || !a.Causal || t < 1 {
		return fmt.Errorf("%s: a position bias needs causal tied L2 attention and a context, not %v (causal %t, context %d)", name, a.Kind, a.Causal, t)
	}
	a.PosBias = newParam(name+".posbias", a.WQ.Value.Dtype(), false, a.Heads, t)
	a.PosBias.LRScale = scalarLR
	return nil
}

// Params returns the layer's parameters in the order Forward uses them: W^Q, W^V, the
// temperatures and position bias when present, W^K when present, W^O.
func (a *Attention) Params() []*Param { return nonNil(a.WQ, a.WV, a.LogTemp, a.PosBias, a.WK, a.WO) }

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
	spec := ops.AttentionSpec{Kind: a.Kind, Heads: a.Heads, SeqLen: g.SeqLen, Causal: a.Causal}
	var heads *G.Node
	if w.Bias != nil {
		heads, err = ops.AttentionBiased(packed, w.Bias, spec)
	} else {
		heads, err = ops.Attention(packed, spec)
	}
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
	// Bound is the scalar bound of a contractive layer, whose output is scaled by
	// min(1, LipC / Bound) (ops.Contract); nil otherwise.
	Bound *G.Node
	// Bias is the position bias (H, T) added to the logits, or nil.
	Bias *G.Node
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
	rawQ, rawV := wq, wv // before the temperatures: what the token2 bound reads
	if a.LogTemp != nil {
		s := g.Node(a.LogTemp)
		if wq, err = ops.HeadScale(wq, s, 1); err != nil {
			return AttnWeights{}, err
		}
		if wv, err = ops.HeadScale(wv, s, -2); err != nil {
			return AttnWeights{}, err
		}
	}
	w := AttnWeights{WQ: wq, WV: wv}
	if a.PosBias != nil {
		if g.SeqLen > a.PosBias.Value.Shape()[1] {
			return AttnWeights{}, fmt.Errorf("%s: sequences of %d tokens, position bias over %d", a.WQ.Name, g.SeqLen, a.PosBias.Value.Shape()[1])
		}
		w.Bias = g.Node(a.PosBias)
	}
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
	w.Bound, err = boundOf(a.Bound).node(a, g, wq, wv, rawQ, rawV, w.WO, w.Bias)
	return w, err
}

// paramNode is the weight function of a layer that applies its parameters as they are.
func paramNode(g *Graph) func(*Param) (*G.Node, error) {
	return func(p *Param) (*G.Node, error) { return g.Node(p), nil }
}

// LipschitzInf is the certified inf-norm constant for sequences of n tokens (tied L2 only):
// the smaller of Kim et al.'s bound (none with a position bias) and the product bound,
// times the contractive scale; dp and l2-untied return lipschitz.ErrNotLipschitz.
func (a *Attention) LipschitzInf(n int) (float64, error) {
	kim, err := a.RawBound(ops.BoundKim, n)
	if err != nil {
		return 0, err
	}
	product, err := a.RawBound(ops.BoundProduct, n)
	if err != nil {
		return 0, err
	}
	s, err := a.Scale()
	return s * min(kim, product), err
}

// RawBound is the bound of the given form for sequences of n tokens at the layer's
// weights, before the contractive scale (tied L2 only): kim and product bound the inf-norm
// constant, token2 (with exact spectral norms) the token-norm constant.
func (a *Attention) RawBound(form ops.BoundForm, n int) (float64, error) {
	return boundOf(form).certified(a, n)
}

// biasRows is the position bias as one row per head, or nil without one.
func (a *Attention) biasRows() [][]float64 {
	if a.PosBias == nil {
		return nil
	}
	v, t := a.PosBias.Float64s(), a.PosBias.Value.Shape()[1]
	rows := make([][]float64, a.Heads)
	for h := range rows {
		rows[h] = v[h*t : (h+1)*t]
	}
	return rows
}

// LipschitzTok2 is the certified token-norm constant for sequences of n tokens (tied L2
// only): the token2 bound with exact spectral norms, times the contractive scale.
func (a *Attention) LipschitzTok2(n int) (float64, error) {
	ub, err := a.RawBound(ops.BoundTok2, n)
	if err != nil {
		return 0, err
	}
	s, err := a.Scale()
	return s * ub, err
}

// Lipschitz2 is the 2-norm upper bound of docs/math.md ("The 2-norm bound") for sequences
// of n tokens (tied L2 only), times the contractive scale; dp and l2-untied return
// lipschitz.ErrNotLipschitz. It is +Inf with a position bias, for which it is not derived.
func (a *Attention) Lipschitz2(n int) (float64, error) {
	wq, wv, wo, err := a.boundWeights()
	if err != nil {
		return 0, err
	}
	if a.PosBias != nil {
		return math.Inf(1), nil
	}
	ub, err := lipschitz.L2MHABound2(n, wq, wv, wo)
	if err != nil {
		return 0, err
	}
	s, err := a.scale(wq, wv, wo)
	return s * ub, err
}

// Scale is the contractive factor min(1, c / UB(BoundLen)) at the layer's weights (for
// token2 with the power-iteration estimates training divides by), or 1 for plain attention.
func (a *Attention) Scale() (float64, error) {
	if a.LipC == 0 {
		return 1, nil
	}
	wq, wv, wo, err := a.boundWeights()
	if err != nil {
		return 0, err
	}
	return a.scale(wq, wv, wo)
}

// scale is Scale at the given weights.
func (a *Attention) scale(wq, wv []*mat.Dense, wo *mat.Dense) (float64, error) {
	if a.LipC == 0 {
		return 1, nil
	}
	ub, err := boundOf(a.Bound).train(a, wq, wv, wo)
	if err != nil {
		return 0, err
	}
	if !(ub > 0) || math.IsInf(ub, 1) {
		return 0, fmt.Errorf("%s: %v bound %v, want positive and finite", a.WQ.Name, a.Bound, ub)
	}
	return min(1, a.LipC/ub), nil
}

// boundWeights returns the per-head query and value maps and W^O of a tied L2 layer as it
// applies them (with its temperatures).
func (a *Attention) boundWeights() (wq, wv []*mat.Dense, wo *mat.Dense, err error) {
	if wq, wv, wo, err = a.rawBoundWeights(); err != nil {
		return nil, nil, nil, err
	}
	if a.LogTemp != nil {
		for h, s := range a.LogTemp.Float64s() {
			wq[h].Scale(math.Exp(s), wq[h])
			wv[h].Scale(math.Exp(-2*s), wv[h])
		}
	}
	return wq, wv, wo, nil
}

// rawBoundWeights is boundWeights before the temperatures: the parameters, as new float64
// matrices, W^{Q,h} and W^{V,h} (D, d) per head and W^O (D, D).
func (a *Attention) rawBoundWeights() (wq, wv []*mat.Dense, wo *mat.Dense, err error) {
	if a.Kind != ops.L2 {
		return nil, nil, nil, fmt.Errorf("%s (%v attention): %w", a.WQ.Name, a.Kind, lipschitz.ErrNotLipschitz)
	}
	dim := a.WQ.Value.Shape()[0]
	d := dim / a.Heads
	wq, wv = make([]*mat.Dense, a.Heads), make([]*mat.Dense, a.Heads)
	for h := range a.Heads {
		wq[h], wv[h] = mat.NewDense(dim, d, nil), mat.NewDense(dim, d, nil)
		headColumns64(wq[h].RawMatrix().Data, a.WQ.Value, dim, h*d, d)
		headColumns64(wv[h].RawMatrix().Data, a.WV.Value, dim, h*d, d)
	}
	wo = mat.NewDense(dim, dim, nil)
	headColumns64(wo.RawMatrix().Data, a.WO.Value, dim, 0, dim)
	return wq, wv, wo, nil
}

// headColumns64 writes columns from..from+d of t (rows, cols), as float64, into dst (rows, d).
func headColumns64(dst []float64, t *tensor.Dense, cols, from, d int) {
	switch v := t.Data().(type) {
	case []float32:
		for i := range len(dst) / d {
			for j, x := range v[i*cols+from : i*cols+from+d] {
				dst[i*d+j] = float64(x)
			}
		}
	case []float64:
		for i := range len(dst) / d {
			copy(dst[i*d:(i+1)*d], v[i*cols+from:i*cols+from+d])
		}
	}
}
