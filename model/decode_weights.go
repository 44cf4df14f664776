package model

import (
	"fmt"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
	"lipformer/layers"
	"lipformer/ops"
)

// blockWeights are the weights one block applies to a row, as the Decoder keeps them: the
// ones computed from parameters (spectral normalisations, the contractive scale) evaluated
// once by the ops that the model's graphs use.
type blockWeights[T kernel.Float] struct {
	kind   ops.AttentionKind
	packed []T // (D, k*D): [W^Q | W^K | W^V], or for tied L2 W^Q alone
	// wo is W^O (D, D), times the contractive scale min(1, c / UB) if any; for tied L2
	// blockdiag(M_1, ..., M_H) times that (foldL2Mix), so that the heads' P Q_h map straight
	// to the output.
	wo       []T
	bias     []T             // (H, L) position bias of the logits, or nil
	mlps     []mlpWeights[T] // the MLP sub-blocks in order, each after ln2
	mix      *mixWeights[T]  // the mixing sub-block, or nil
	ln1, ln2 *lnWeights[T]   // nil without LayerNorm or BallNorm
}

// mlpWeights are the weights of one MLP sub-block as it applies them.
type mlpWeights[T kernel.Float] struct {
	fc, fcB    []T // (D, F), (F)
	proj, prjB []T // (F, D), (D)
	act        mlpActivation
}

// mixWeights are the weights of a mixing sub-block as it applies them.
type mixWeights[T kernel.Float] struct {
	rev  []T // (k) softmax(r) reversed: rev[j] weighs row j of a full window t-k+1..t
	w, b []T // (D, D) W' and (D)
}

// lnWeights are a LayerNorm's gain and bias (D) and its eps, or a BallNorm's radius.
type lnWeights[T kernel.Float] struct {
	gain, bias []T
	eps        float64
	ball       float64 // the BallNorm's radius (norm ball)
}

// lnWeightsOf copies a LayerNorm's weights, or is nil for nil.
func lnWeightsOf[T kernel.Float](ln *layers.LayerNorm) *lnWeights[T] {
	if ln == nil {
		return nil
	}
	return &lnWeights[T]{gain: paramData[T](ln.Gain), bias: paramData[T](ln.Bias), eps: ln.Eps}
}

// finalWeightsOf copies the weights of the final normalisation, a LayerNorm or a BallNorm.
func finalWeightsOf[T kernel.Float](n layers.Normalization) *lnWeights[T] {
	if ball, ok := n.(*layers.BallNorm); ok {
		return normWeightsOf[T](nil, ball)
	}
	return lnWeightsOf[T](n.(*layers.LayerNorm))
}

// headData is the untied head's weight (D, V) as the model applies it: Head.W, or
// HeadGain W / sigma for a model bounded end to end.
func headData[T kernel.Float](m *Model) []T {
	w := paramData[T](m.Head.W)
	if m.HeadSN != nil {
		s := T(m.Cfg.HeadGain() / m.HeadSN.Sigma())
		for i := range w {
			w[i] *= s
		}
	}
	return w
}

// normWeightsOf copies the weights of a sub-block's LayerNorm ln or BallNorm ball, or is
// nil when both are nil.
func normWeightsOf[T kernel.Float](ln *layers.LayerNorm, ball *layers.BallNorm) *lnWeights[T] {
	if ball != nil {
		return &lnWeights[T]{ball: ball.Radius()}
	}
	return lnWeightsOf[T](ln)
}

// blockNodes are a block's weights as nodes of a graph that computes them from the
// parameters.
type blockNodes struct {
	kind         ops.AttentionKind
	packed       G.Nodes // (D, D) each: W^Q, W^K, W^V, or for tied L2 W^Q alone
	wv           *G.Node // (D, D): tied L2's value map, for foldL2Mix; nil otherwise
	wo           *G.Node // (D, D)
	bias         *G.Node // (H, L) position bias, or nil
	mlps         []mlpNodes
	mix          *layers.Mix // the mixing sub-block, or nil
	mixW         *G.Node     // (D, D) its W'
	ln1, ln2     *layers.LayerNorm
	ball1, ball2 *layers.BallNorm
}

// mlpNodes are one MLP sub-block's weights as nodes.
type mlpNodes struct {
	fc, fcB, proj, projB *G.Node
	act                  mlpActivation
}

// blockWeightsOf evaluates the weights of every block of m, in m's dtype T.
func blockWeightsOf[T kernel.Float](m *Model) ([]blockWeights[T], error) {
	g, err := layers.NewGraph(m.Cfg.Dtype.Tensor(), 1, 1, false)
	if err != nil {
		return nil, err
	}
	var nodes []blockNodes
	for _, b := range m.Blocks {
		var bn blockNodes
		var err error
		switch b := b.(type) {
		case *layers.Block:
			bn, err = plainBlockNodes(g, b)
		case *layers.InvertibleBlock:
			bn, err = invertibleBlockNodes(g, b)
		default:
			err = fmt.Errorf("decoder weights: block %T", b)
		}
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, bn)
	}
	vm := G.NewTapeMachine(g.G)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return nil, fmt.Errorf("decoder weights: %w", err)
	}
	out := make([]blockWeights[T], len(nodes))
	for i, bn := range nodes {
		w := &out[i]
		w.kind, w.ln1, w.ln2 = bn.kind, normWeightsOf[T](bn.ln1, bn.ball1), normWeightsOf[T](bn.ln2, bn.ball2)
		w.packed = concatColumns[T](bn.packed)
		w.wo = valueOf[T](bn.wo)
		for _, mn := range bn.mlps {
			w.mlps = append(w.mlps, mlpWeights[T]{fc: valueOf[T](mn.fc), fcB: valueOf[T](mn.fcB), proj: valueOf[T](mn.proj), prjB: valueOf[T](mn.projB), act: mn.act})
		}
		if bn.bias != nil {
			w.bias = valueOf[T](bn.bias)
		}
		if bn.mix != nil {
			rev := ops.MixTaps(paramData[T](bn.mix.Taps))
			slices.Reverse(rev)
			w.mix = &mixWeights[T]{rev: rev, w: valueOf[T](bn.mixW), b: paramData[T](bn.mix.Lin.B)}
		}
		if bn.wv != nil {
			if w.wo, err = foldL2Mix(valueOf[T](bn.packed[0]), valueOf[T](bn.wv), w.wo, m.Cfg.Width, m.Cfg.Heads); err != nil {
				return nil, fmt.Errorf("decoder weights: %w", err)
			}
		}
	}
	return out, nil
}

// foldL2Mix returns blockdiag(M_1, ..., M_H) wo for tied L2's value maps M_h of wq and wv
// (kernel.L2Mix) and its output map wo, all (D, D). Head h of the layer is P X A_h W^{V,h} =
// (P Q_h) M_h with Q_h = X W^{Q,h} (docs/math.md, "Bounds of tied L2 attention"), so the heads' P Q_h side by side,
// times the result, are the layer's output: a decoder caches the queries Q_h alone, which
// are also the keys, and a step reads half the cache that dp's does.
func foldL2Mix[T kernel.Float](wq, wv, wo []T, width, heads int) ([]T, error) {
	mix, err := kernel.L2Mix(wq, wv, width, width, heads) // (H, d, d)
	if err != nil {
		return nil, err
	}
	d := width / heads
	out := make([]T, width*width)
	for h := range heads {
		kernel.Gemm(false, false, d, width, d, 1, mix[h*d*d:], d, wo[h*d*width:], width, 0, out[h*d*width:], width)
	}
	return out, nil
}

// plainBlockNodes adds the weights of a transformer block to g.
func plainBlockNodes(g *layers.Graph, b *layers.Block) (blockNodes, error) {
	bn := blockNodes{kind: b.Attn.Kind, ln1: b.LN1, ln2: b.LN2, ball1: b.Ball1, ball2: b.Ball2,
		mlps: []mlpNodes{{fc: g.Node(b.MLP.Fc.W), fcB: g.Node(b.MLP.Fc.B), proj: g.Node(b.MLP.Proj.W), projB: g.Node(b.MLP.Proj.B)}}}
	w, err := b.Attn.Weights(g)
	if err != nil {
		return bn, err
	}
	if err = bn.setAttention(w, b.Attn.LipC); err != nil {
		return bn, err
	}
	err = bn.setMix(g, b.Mix)
	return bn, err
}

// setMix sets bn's mixing sub-block, when x is not nil.
func (bn *blockNodes) setMix(g *layers.Graph, x *layers.Mix) error {
	if x == nil {
		return nil
	}
	var err error
	bn.mix = x
	bn.mixW, err = x.Weight(g)
	return err
}

// invertibleBlockNodes adds the weights of an invertible block to g: the attention
// branch's (layers.InvertibleBlock.AttnWeights) and each spectrally normalised MLP's.
func invertibleBlockNodes(g *layers.Graph, b *layers.InvertibleBlock) (blockNodes, error) {
	bn := blockNodes{kind: b.Attn.Kind, ball1: b.Ball1, ball2: b.Ball2}
	w, err := b.AttnWeights(g)
	if err != nil {
		return bn, err
	}
	if err = bn.setAttention(w, b.Attn.LipC); err != nil {
		return bn, err
	}
	for _, m := range b.MLPs {
		mn := mlpNodes{fcB: g.Node(m.Fc.B), projB: g.Node(m.Proj.B), act: actELU}
		if m.Act == ops.ActMaxMin {
			mn.act = actMaxMin
		}
		if mn.fc, mn.proj, err = m.Weights(g); err != nil {
			return bn, err
		}
		bn.mlps = append(bn.mlps, mn)
	}
	err = bn.setMix(g, b.Mix)
	return bn, err
}

// setAttention sets bn's attention weights from an attention layer's: its packed projection
// blocks (for tied L2 W^Q alone, and W^V for foldL2Mix), and its output map with a
// contractive layer's scale min(1, c / UB) folded in (ops.Contract on W^O rather than
// on the output: the same product).
func (bn *blockNodes) setAttention(w layers.AttnWeights, c float64) error {
	bn.packed, bn.wo, bn.bias = G.Nodes{w.WQ, w.WK, w.WV}, w.WO, w.Bias
	if bn.kind == ops.L2 {
		bn.packed, bn.wv = G.Nodes{w.WQ}, w.WV
	}
	if w.Bound == nil {
		return nil
	}
	var err error
	bn.wo, err = ops.Contract(w.WO, w.Bound, c)
	return err
}

// valueOf copies the value of an evaluated node.
func valueOf[T kernel.Float](n *G.Node) []T {
	return append([]T(nil), n.Value().(*tensor.Dense).Data().([]T)...)
}

// concatColumns places the evaluated (R, C_i) matrices side by side, (R, sum C_i).
func concatColumns[T kernel.Float](ns G.Nodes) []T {
	rows, cols := ns[0].Shape()[0], 0
	for _, n := range ns {
		cols += n.Shape()[1]
	}
	out := make([]T, rows*cols)
	off := 0
	for _, n := range ns {
		c := n.Shape()[1]
		v := n.Value().(*tensor.Dense).Data().([]T)
		for r := 0; r < rows; r++ {
			copy(out[r*cols+off:r*cols+off+c], v[r*c:(r+1)*c])
		}
		off += c
	}
	return out
}

// paramData copies a parameter's values.
func paramData[T kernel.Float](p *layers.Param) []T { return append([]T(nil), p.Value.Data().([]T)...) }

// tableData is a copy of the table e's look-up reads (V, D): its weights, or their rows
// projected onto its ball.
func tableData[T kernel.Float](e *layers.Embedding) []T {
	if e.Radius == 0 {
		return paramData[T](e.W)
	}
	w := paramData[T](e.W)
	kernel.BallNormRows(w, append([]T(nil), w...), e.W.Value.Shape()[1], e.Radius)
	return w
}
