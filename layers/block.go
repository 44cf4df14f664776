package layers

import (
	"fmt"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"

	"lipformer/ops"
	"lipformer/spec"
)

// Residual is a block of a model's residual stream: a Block or an InvertibleBlock.
type Residual interface {
	// Forward maps x (B*T, D) to (B*T, D).
	Forward(g *Graph, x *G.Node) (*G.Node, error)
	// Params returns the block's parameters in the order Forward uses them.
	Params() []*Param
	// Attention is the block's attention layer.
	Attention() *Attention
}

// Normalization is a per-token normalisation of the residual stream: a LayerNorm, or its
// certified substitute a BallNorm.
type Normalization interface {
	// Forward maps x (B*T, D) to (B*T, D).
	Forward(g *Graph, x *G.Node) (*G.Node, error)
	// Params returns the normalisation's parameters.
	Params() []*Param
}

// Block is a transformer block: an attention and an MLP sub-block, each residual, with
// LayerNorms placed as its specification's Norm says (nil for spec.NoLN and spec.BallPre),
// or BallNorms (non-nil for spec.BallPre alone).
type Block struct {
	Norm  spec.Norm
	Drop  float64 // dropout on each residual branch's output, in training graphs
	LN1   *LayerNorm
	Ball1 *BallNorm
	Attn  *Attention
	LN2   *LayerNorm
	Ball2 *BallNorm
	MLP   *MLP
	Mix   *Mix // the mixing sub-block's branch before the attention sub-block, or nil
	// AttnOff makes Forward skip the attention sub-block: x passes unchanged (no LayerNorm,
	// no branch), an ablation for evaluation graphs. Forward reads it when it builds a
	// graph; nothing else does (Params still lists the attention's parameters).
	AttnOff bool
}

// NewBlock makes block name of the model s (its parameters' names start with name): a
// causal attention of s.Arch's kind, contractive with coefficient s.Contraction(), and an
// MLP, with GPT-2's initialisation scaled to s.Layers.
func NewBlock(name string, s spec.Model, rng *rand.Rand) (*Block, error) {
	if s.Norm.String() == "" {
		return nil, fmt.Errorf("%s: norm placement unset", name)
	}
	attn, err := newBlockAttention(name+".attn", s, rng)
	if err != nil {
		return nil, err
	}
	dt := s.Dtype.Tensor()
	b := &Block{Norm: s.Norm, Drop: s.Dropout, Attn: attn,
		MLP: NewMLP(name+".mlp", s.Width, s.HiddenWidth(), s.Std, residualStd(s.Std, max(s.Layers, 1)), dt, rng)}
	switch s.Norm {
	case spec.PreLN, spec.PostLN:
		b.LN1, b.LN2 = NewLayerNorm(name+".ln1", s.Width, dt), NewLayerNorm(name+".ln2", s.Width, dt)
	case spec.BallPre:
		if b.Ball1, b.Ball2, err = newBallNorms(name, s); err != nil {
			return nil, err
		}
	}
	if s.Mix > 0 {
		if b.Mix, err = NewMix(name+".mix", s.Width, s.Mix, 0, residualStd(s.Std, max(s.Layers, 1)), dt, rng); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// newBlockAttention makes the attention of a block of s: GPT-2's initialisation, the
// output map scaled down with depth, temperatures and a position bias when s.L2Temp and
// s.L2PosBias say so, tied L2 value maps balanced when s.BalanceL2 says so, and for a
// contractive tied L2 layer its bound (with power-iteration vectors for token2).
func newBlockAttention(name string, s spec.Model, rng *rand.Rand) (*Attention, error) {
	kind := s.Arch.Kind()
	attn, err := NewAttention(name, kind, s.Width, s.Heads, true, s.Std, residualStd(s.Std, max(s.Layers, 1)), s.Dtype.Tensor(), rng)
	if err != nil {
		return nil, err
	}
	if s.L2Temp {
		if err := attn.AddTemperature(name); err != nil {
			return nil, err
		}
	}
	if s.L2PosBias {
		if err := attn.AddPositionBias(name, s.Context); err != nil {
			return nil, err
		}
	}
	if s.BalanceL2 && kind == ops.L2 {
		if _, err := attn.BalanceL2Values(); err != nil {
			return nil, err
		}
	}
	if c := s.Contraction(); c > 0 && kind == ops.L2 {
		attn.LipC, attn.BoundLen, attn.Bound = c, s.Context, s.L2Bound
		if s.L2Bound == ops.BoundTok2 {
			attn.AddPower(name)
		}
	}
	return attn, nil
}

// Forward maps x (B*T, D) to (B*T, D); with AttnOff, through the mixing sub-block (if
// any) and the MLP sub-block alone.
func (b *Block) Forward(g *Graph, x *G.Node) (*G.Node, error) {
	var err error
	if b.Mix != nil { // x + X(x), no normalisation
		if x, err = b.residual(g, x, nil, nil, b.Mix.Forward); err != nil {
			return nil, err
		}
	}
	if !b.AttnOff {
		if x, err = b.residual(g, x, b.LN1, b.Ball1, b.Attn.Forward); err != nil {
			return nil, err
		}
	}
	return b.residual(g, x, b.LN2, b.Ball2, b.MLP.Forward)
}

// residual applies one sub-block f around x with its LayerNorm ln or BallNorm ball placed
// per the config; with both nil (the mixing sub-block) it is x + f(x).
func (b *Block) residual(g *Graph, x *G.Node, ln *LayerNorm, ball *BallNorm, f func(*Graph, *G.Node) (*G.Node, error)) (*G.Node, error) {
	in := x
	var err error
	switch {
	case ln == nil && ball == nil:
	case b.Norm == spec.PreLN:
		in, err = ln.Forward(g, x)
	case b.Norm == spec.BallPre:
		in, err = ball.Forward(g, x)
	}
	if err != nil {
		return nil, err
	}
	y, err := f(g, in)
	if err != nil {
		return nil, err
	}
	if y, err = g.Dropout(y, b.Drop); err != nil {
		return nil, err
	}
	if y, err = ops.Add(x, y); err != nil {
		return nil, err
	}
	if b.Norm == spec.PostLN && ln != nil {
		return ln.Forward(g, y)
	}
	return y, nil
}

// Params returns the block's parameters in the order Forward uses them: each sub-block's
// normalisation before its branch (pre-LN, ball) or after it (post-LN).
func (b *Block) Params() []*Param {
	var ps []*Param
	if b.Mix != nil {
		ps = append(ps, b.Mix.Params()...)
	}
	for _, part := range []struct {
		ln   *LayerNorm
		ball *BallNorm
		f    []*Param
	}{{b.LN1, b.Ball1, b.Attn.Params()}, {b.LN2, b.Ball2, b.MLP.Params()}} {
		var norm []*Param
		switch {
		case part.ln != nil:
			norm = part.ln.Params()
		case part.ball != nil:
			norm = part.ball.Params()
		}
		if b.Norm == spec.PostLN {
			ps = append(append(ps, part.f...), norm...)
		} else {
			ps = append(append(ps, norm...), part.f...)
		}
	}
	return ps
}

// newBallNorms makes the two BallNorms of a block of Norm spec.BallPre, named ball1 and ball2.
func newBallNorms(name string, s spec.Model) (*BallNorm, *BallNorm, error) {
	r, dt := s.EffectiveBallRadius(), s.Dtype.Tensor()
	b1, err := NewBallNorm(name+".ball1", s.Width, r, dt)
	if err != nil {
		return nil, nil, err
	}
	b2, err := NewBallNorm(name+".ball2", s.Width, r, dt)
	return b1, b2, err
}

// Attention is the block's attention layer.
func (b *Block) Attention() *Attention { return b.Attn }
