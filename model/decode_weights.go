package model

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/layers"
	"lipformer/lipschitz"
	"lipformer/ops"
)

// blockWeights are the weights one block applies to a row, as the Decoder keeps them: the
// ones computed from parameters (tied L2 value maps, spectral normalisations, the
// contractive scale) evaluated once by the ops that the model's graphs use.
type blockWeights[T ops.Float] struct {
	kind       ops.AttentionKind
	packed     []T // (D, k*D): [W^Q | W^K | W^V], or for tied L2 [W^Q | L2Values(W^Q, W^V)]
	wo         []T // (D, D), times the contractive scale min(1, c / UB_inf) if any
	fc, fcB    []T // (D, F), (F)
	proj, prjB []T // (F, D), (D)
	elu        bool
	ln1, ln2   *lnWeights[T] // nil without LayerNorm
}

// lnWeights are a LayerNorm's gain and bias (D) and its eps.
type lnWeights[T ops.Float] struct {
	gain, bias []T
	eps        float64
}

// lnWeightsOf copies a LayerNorm's weights, or is nil for nil.
func lnWeightsOf[T ops.Float](ln *layers.LayerNorm) *lnWeights[T] {
	if ln == nil {
		return nil
	}
	return &lnWeights[T]{gain: paramData[T](ln.Gain), bias: paramData[T](ln.Bias), eps: ln.Eps}
}

// blockNodes are a block's weights as nodes of a graph that computes them from the
// parameters.
type blockNodes struct {
	kind                 ops.AttentionKind
	packed               G.Nodes // (D, D) each
	wo                   *G.Node // (D, D)
	fc, fcB, proj, projB *G.Node
	elu                  bool
	ln1, ln2             *layers.LayerNorm
}

// blockWeightsOf evaluates the weights of every block of m, in m's dtype T.
func blockWeightsOf[T ops.Float](m *Model) ([]blockWeights[T], error) {
	dt, _ := m.Cfg.dtype()
	g, err := layers.NewGraph(dt, 1, 1, false)
	if err != nil {
		return nil, err
	}
	var nodes []blockNodes
	for _, b := range m.Blocks {
		bn, err := plainBlockNodes(g, b)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, bn)
	}
	for _, b := range m.Inv {
		bn, err := invertibleBlockNodes(g, b)
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
		w.kind, w.elu, w.ln1, w.ln2 = bn.kind, bn.elu, lnWeightsOf[T](bn.ln1), lnWeightsOf[T](bn.ln2)
		w.packed = concatColumns[T](bn.packed)
		w.wo, w.fc, w.fcB, w.proj, w.prjB = valueOf[T](bn.wo), valueOf[T](bn.fc), valueOf[T](bn.fcB), valueOf[T](bn.proj), valueOf[T](bn.projB)
	}
	return out, nil
}

// plainBlockNodes adds the weights of a transformer block to g.
func plainBlockNodes(g *layers.Graph, b *layers.Block) (blockNodes, error) {
	bn := blockNodes{kind: b.Attn.Kind, ln1: b.LN1, ln2: b.LN2,
		fc: g.Node(b.MLP.Fc.W), fcB: g.Node(b.MLP.Fc.B), proj: g.Node(b.MLP.Proj.W), projB: g.Node(b.MLP.Proj.B)}
	var err error
	bn.packed, bn.wo, err = attentionNodes(g, b.Attn, func(p *layers.Param) (*G.Node, error) { return g.Node(p), nil })
	return bn, err
}

// invertibleBlockNodes adds the weights of an invertible block to g: the attention
// branch's (for the dp control W^V and W^O spectrally normalised, W^O times c, as
// layers.InvertibleBlock.AttnBranch) and the spectrally normalised MLP's.
func invertibleBlockNodes(g *layers.Graph, b *layers.InvertibleBlock) (blockNodes, error) {
	bn := blockNodes{kind: b.Attn.Kind, elu: true, fcB: g.Node(b.MLP.Fc.B), projB: g.Node(b.MLP.Proj.B)}
	weight := func(p *layers.Param) (*G.Node, error) { return g.Node(p), nil }
	if b.VNorm != nil {
		weight = func(p *layers.Param) (*G.Node, error) {
			if p == b.Attn.WV {
				return b.VNorm.Weight(g, 1)
			}
			return b.ONorm.Weight(g, b.C)
		}
	}
	var err error
	if bn.packed, bn.wo, err = attentionNodes(g, b.Attn, weight); err != nil {
		return bn, err
	}
	if bn.fc, err = b.MLP.Fc.SN.Weight(g, b.MLP.Fc.C); err != nil {
		return bn, err
	}
	bn.proj, err = b.MLP.Proj.SN.Weight(g, b.MLP.Proj.C)
	return bn, err
}

// attentionNodes adds to g the packed projection's blocks and the output map of a, as
// layers.Attention computes them with weight(W^V) and weight(W^O): for tied L2 the value
// block is L2Values(W^Q, W^V), and a contractive layer's output map is scaled by
// min(1, c / UB_inf) (ops.Contract on W^O rather than on the output: the same product).
func attentionNodes(g *layers.Graph, a *layers.Attention, weight func(*layers.Param) (*G.Node, error)) (G.Nodes, *G.Node, error) {
	wq := g.Node(a.WQ)
	wv, err := weight(a.WV)
	if err != nil {
		return nil, nil, err
	}
	wo, err := weight(a.WO)
	if err != nil {
		return nil, nil, err
	}
	packed := G.Nodes{wq, nil, wv}
	if a.Kind == ops.L2 {
		weff, err := ops.L2Values(wq, wv, a.Heads)
		if err != nil {
			return nil, nil, err
		}
		packed = G.Nodes{wq, weff}
	} else {
		if a.WK == nil {
			return nil, nil, fmt.Errorf("%s: %v attention needs a key map", a.WQ.Name, a.Kind)
		}
		packed[1] = g.Node(a.WK)
	}
	if a.LipC == 0 {
		return packed, wo, nil
	}
	ub, err := ops.L2BoundInf(wq, wv, wo, a.Heads, lipschitz.PhiInv(a.BoundLen))
	if err != nil {
		return nil, nil, err
	}
	wo, err = ops.Contract(wo, ub, a.LipC)
	return packed, wo, err
}

// valueOf copies the value of an evaluated node.
func valueOf[T ops.Float](n *G.Node) []T {
	return append([]T(nil), n.Value().(*tensor.Dense).Data().([]T)...)
}

// concatColumns places the evaluated (R, C_i) matrices side by side, (R, sum C_i).
func concatColumns[T ops.Float](ns G.Nodes) []T {
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
func paramData[T ops.Float](p *layers.Param) []T { return append([]T(nil), p.Value.Data().([]T)...) }
