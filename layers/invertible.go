package layers

import (
	"fmt"
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"

	"lipformer/ops"
	"lipformer/spec"
)

// InvertibleBlock is a transformer block of invertible residual sub-blocks without
// LayerNorm (docs/math.md, "Contraction and inversion"): with spec.Model.Mix first x = x +
// X(x); then x = x + A(x); then x = x + M_k(x) for each of its MLP branches k = 0..m-1
// (m = 1 unless spec.Model.MLPBlocks says more), each branch c-Lipschitz in its own norm,
// so each sub-block can be inverted by fixed-point iteration on its own.
//   - X, the mixing branch (a Mix): a convex combination of each token and the ones
//     before it, then a spectrally normalised linear map, c-Lipschitz in the token norm.
//   - A, the attention branch: contractive tied L2 attention (Attn.LipC = c), c-Lipschitz
//     in the inf-norm of the sequence under the kim and product bounds, in the token norm
//     under token2 (the bound of the current weights); or, for the
//     negative control (Kind dp), dp attention with W^V and W^O divided by their spectral
//     norm estimates and the result times c: the naive normalisation that ignores P's
//     dependence on X, with no bound at all.
//   - M_k, the MLP branches: SpectralMLPs, about c-Lipschitz in each token's 2-norm.
//
// With Norm ball each attention and MLP branch starts with a BallNorm, 1-Lipschitz in the
// token norm: A(B1(x)) and M_k(B2(x)), the MLP branches sharing B2, still c-Lipschitz
// under the token2 bound.
type InvertibleBlock struct {
	Mix     *Mix      // X, or nil
	Ball1   *BallNorm // before A, or nil
	Ball2   *BallNorm // before M, or nil
	Attn    *Attention
	VNorm   *SpectralNorm  // dp: the normalisation of W^V; nil for L2
	ONorm   *SpectralNorm  // dp: the normalisation of W^O; nil for L2
	MLPs    []*SpectralMLP // the MLP branches in forward order
	C       float64        // the Lipschitz coefficient c
	Dropout float64        // on each branch's output, in training graphs
	// AttnOff makes Forward skip the attention sub-block: x passes unchanged, an ablation
	// for evaluation graphs. Forward reads it when it builds a graph; AttnBranch and the
	// rest of the block's methods ignore it.
	AttnOff bool
}

// NewInvertibleBlock makes invertible block name of the model s: s.Arch invertible-l2 or
// invertible-dp, c = s.LipC in (0, 1), s.Context the N of the attention bound. Norm ball
// puts a BallNorm before each branch and then needs the token2 bound for L2 (the BallNorm
// is 1-Lipschitz in the token norm, not in the inf-norm); any other Norm means none, since
// the branches hold no LayerNorm.
func NewInvertibleBlock(name string, s spec.Model, rng *rand.Rand) (*InvertibleBlock, error) {
	if !s.Arch.Invertible() {
		return nil, fmt.Errorf("%s: arch %v is not invertible", name, s.Arch)
	}
	if !(s.LipC > 0 && s.LipC < 1) || s.Context < 1 {
		return nil, fmt.Errorf("%s: Lipschitz coefficient %g and context %d, want 0 < c < 1 and context >= 1", name, s.LipC, s.Context)
	}
	if s.Norm == spec.BallPre && s.Arch == spec.InvertibleL2 && s.L2Bound != ops.BoundTok2 {
		return nil, fmt.Errorf("%s: ball norm with the %v bound: the ball norm is 1-Lipschitz in the token norm only, want the token2 bound", name, s.L2Bound)
	}
	if s.MLPGain < 0 || math.IsNaN(s.MLPGain) || math.IsInf(s.MLPGain, 0) {
		return nil, fmt.Errorf("%s: MLP gain %g, want finite and >= 0 (0: none)", name, s.MLPGain)
	}
	attn, err := newBlockAttention(name+".attn", s, rng)
	if err != nil {
		return nil, err
	}
	b := &InvertibleBlock{Attn: attn, C: s.LipC, Dropout: s.Dropout}
	if s.Mix > 0 {
		if b.Mix, err = NewMix(name+".mix", s.Width, s.Mix, s.LipC, s.Std, s.Dtype.Tensor(), rng); err != nil {
			return nil, err
		}
	}
	if s.Norm == spec.BallPre {
		if b.Ball1, b.Ball2, err = newBallNorms(name, s); err != nil {
			return nil, err
		}
	}
	if s.Arch == spec.InvertibleDP {
		b.VNorm, b.ONorm = NewSpectralNorm(attn.WV, rng), NewSpectralNorm(attn.WO, rng)
	}
	for k := range s.MLPSubBlocks() {
		mlpName := name + "." + MLPName(k)
		mlp := NewSpectralMLP(mlpName, s.Width, s.HiddenWidth(), s.LipC, s.Std, s.Dtype.Tensor(), rng)
		mlp.Act = s.MLPActivation()
		if s.MLPGain > 0 {
			mlp.AddGain(mlpName, math.Log(s.MLPGain))
		}
		b.MLPs = append(b.MLPs, mlp)
	}
	return b, nil
}

// MLPName names MLP sub-block k of an invertible block, as its parameters and its
// certificate factor are named: mlp, mlp1, mlp2, ... (the first keeps the name of a block
// with one MLP).
func MLPName(k int) string {
	if k == 0 {
		return "mlp"
	}
	return fmt.Sprintf("mlp%d", k)
}

// Forward maps x (B*T, D) to (B*T, D); with AttnOff, through the mixing and MLP
// sub-blocks alone.
func (b *InvertibleBlock) Forward(g *Graph, x *G.Node) (*G.Node, error) {
	var err error
	if b.Mix != nil {
		if x, err = b.residual(g, x, b.Mix.Forward); err != nil {
			return nil, err
		}
	}
	if !b.AttnOff {
		if x, err = b.residual(g, x, b.AttnBranch); err != nil {
			return nil, err
		}
	}
	for k, m := range b.MLPs {
		if b.Ball2 == nil && b.Dropout == 0 { // the branch reads x itself: one fused op
			x, err = m.Residual(g, x)
		} else {
			x, err = b.residual(g, x, b.MLPBranch(k))
		}
		if err != nil {
			return nil, err
		}
	}
	return x, nil
}

// residual is x + dropout(f(x)).
func (b *InvertibleBlock) residual(g *Graph, x *G.Node, f func(*Graph, *G.Node) (*G.Node, error)) (*G.Node, error) {
	y, err := f(g, x)
	if err != nil {
		return nil, err
	}
	if y, err = g.Dropout(y, b.Dropout); err != nil {
		return nil, err
	}
	return ops.Add(x, y)
}

// AttnBranch is the attention branch, A(B1(x)) or A(x), mapping x (B*T, D) to (B*T, D).
func (b *InvertibleBlock) AttnBranch(g *Graph, x *G.Node) (*G.Node, error) {
	x, err := normed(g, b.Ball1, x)
	if err != nil {
		return nil, err
	}
	return b.Attn.forward(g, x, b.attnWeight(g))
}

// MLPBranch is MLP branch k, M_k(B2(x)) or M_k(x), mapping x (B*T, D) to (B*T, D).
func (b *InvertibleBlock) MLPBranch(k int) func(*Graph, *G.Node) (*G.Node, error) {
	return func(g *Graph, x *G.Node) (*G.Node, error) {
		x, err := normed(g, b.Ball2, x)
		if err != nil {
			return nil, err
		}
		return b.MLPs[k].Forward(g, x)
	}
}

// normed is ball's output on x, or x for a nil ball.
func normed(g *Graph, ball *BallNorm, x *G.Node) (*G.Node, error) {
	if ball == nil {
		return x, nil
	}
	return ball.Forward(g, x)
}

// AttnWeights adds to g the weights the attention branch applies (Attention.Weights, with
// the dp control's normalised W^V and c-scaled W^O).
func (b *InvertibleBlock) AttnWeights(g *Graph) (AttnWeights, error) {
	return b.Attn.weights(g, b.attnWeight(g))
}

// attnWeight is the attention branch's weight function: for the dp control W^V spectrally
// normalised to 1 and W^O to c, for L2 (made contractive by its bound) the parameters.
func (b *InvertibleBlock) attnWeight(g *Graph) func(*Param) (*G.Node, error) {
	if b.VNorm == nil {
		return paramNode(g)
	}
	return func(p *Param) (*G.Node, error) {
		if p == b.Attn.WV {
			return b.VNorm.Weight(g, 1)
		}
		return b.ONorm.Weight(g, b.C)
	}
}

// AttnLipschitzInf is the certified inf-norm Lipschitz constant of A on sequences of n
// tokens (at most c for n up to the context); the dp control has none and returns an
// error wrapping lipschitz.ErrNotLipschitz.
func (b *InvertibleBlock) AttnLipschitzInf(n int) (float64, error) { return b.Attn.LipschitzInf(n) }

// NaiveAttnLipschitz2 is the constant the dp control's normalisation assumes,
// c ||W^V||_2 ||W^O||_2 / (sigma_V sigma_O): the Lipschitz constant of X -> P X W^V W^O
// for a FIXED attention matrix P of 2-norm 1, which is not a bound of A. It is 0 for L2.
func (b *InvertibleBlock) NaiveAttnLipschitz2() float64 {
	if b.VNorm == nil {
		return 0
	}
	return b.C * b.VNorm.Lipschitz2() * b.ONorm.Lipschitz2()
}

// Params returns the block's parameters in the order Forward uses them: each ball norm,
// when present, before the first branch it serves.
func (b *InvertibleBlock) Params() []*Param {
	var ps []*Param
	if b.Mix != nil {
		ps = append(ps, b.Mix.Params()...)
	}
	if b.Ball1 != nil {
		ps = append(ps, b.Ball1.Params()...)
	}
	ps = append(ps, b.Attn.Params()...)
	if b.Ball2 != nil {
		ps = append(ps, b.Ball2.Params()...)
	}
	for _, mlp := range b.MLPs {
		ps = append(ps, mlp.Params()...)
	}
	return ps
}

// SpectralNorms returns every spectral normalisation of the block.
func (b *InvertibleBlock) SpectralNorms() []*SpectralNorm {
	var sn []*SpectralNorm
	if b.Mix != nil {
		sn = append(sn, b.Mix.SpectralNorms()...)
	}
	for _, mlp := range b.MLPs {
		sn = append(sn, mlp.SpectralNorms()...)
	}
	if b.VNorm != nil {
		sn = append([]*SpectralNorm{b.VNorm, b.ONorm}, sn...)
	}
	return sn
}

// Attention is the block's attention layer.
func (b *InvertibleBlock) Attention() *Attention { return b.Attn }
