package layers

import (
	"fmt"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/ops"
)

// Norm is where a block places its LayerNorms.
type Norm string

const (
	// PreLN: x = x + Attn(LN(x)); x = x + MLP(LN(x)).
	PreLN Norm = "pre"
	// PostLN: x = LN(x + Attn(x)); x = LN(x + MLP(x)).
	PostLN Norm = "post"
	// NoLN: x = x + Attn(x); x = x + MLP(x).
	NoLN Norm = "none"
	// BallPre: x = x + Attn(B(x)); x = x + MLP(B(x)), B a BallNorm, LayerNorm's certified
	// substitute.
	BallPre Norm = "ball"
)

// ParseNorm validates a norm placement name.
func ParseNorm(s string) (Norm, error) {
	switch n := Norm(s); n {
	case PreLN, PostLN, NoLN, BallPre:
		return n, nil
	}
	return "", fmt.Errorf("norm placement %q, want pre, post, none or ball", s)
}

// BlockConfig describes a transformer block.
type BlockConfig struct {
	Width   int               // D
	Heads   int               // H
	Hidden  int               // MLP width, 4D in GPT-2
	Kind    ops.AttentionKind // dp, l2 or l2-untied
	Norm    Norm
	Causal  bool
	Dropout float64 // on each residual branch's output, in training graphs
	Std     float64 // initial weight scale, 0.02 in GPT-2
	Layers  int     // depth of the model, which scales the residual projections' init
	LipC    float64 // c of contractive L2 attention, or 0
	Context int     // the model's context, the N of the contractive bound
	// BalanceL2 rescales tied L2 value maps after initialisation (Attention.BalanceL2Values).
	BalanceL2 bool
	Bound     ops.BoundForm // the bound contractive attention divides by
	L2Temp    bool          // tied L2 attention learns per-head temperatures
	PosBias   bool          // tied L2 attention learns a position bias over the context
	// MLPGain > 0 gives invertible MLP branches a learned input gain starting at MLPGain
	// (SpectralMLP.LogGain); 0 for none.
	MLPGain float64
	// BallRadius is the initial radius of Norm ball's BallNorms in units of sqrt(D).
	BallRadius float64
}

// Block is a transformer block: an attention and an MLP sub-block, each residual, with
// LayerNorms placed as its config says (nil when Norm is NoLN or BallPre), or BallNorms
// (non-nil for BallPre alone).
type Block struct {
	Cfg   BlockConfig
	LN1   *LayerNorm
	Ball1 *BallNorm
	Attn  *Attention
	LN2   *LayerNorm
	Ball2 *BallNorm
	MLP   *MLP
	// AttnOff makes Forward skip the attention sub-block: x passes unchanged (no LayerNorm,
	// no branch), an ablation for evaluation graphs. Forward reads it when it builds a
	// graph; nothing else does (Params still lists the attention's parameters).
	AttnOff bool
}

// NewBlock makes a block; name prefixes its parameters' names.
func NewBlock(name string, cfg BlockConfig, dt tensor.Dtype, rng *rand.Rand) (*Block, error) {
	if _, err := ParseNorm(string(cfg.Norm)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	attn, err := newBlockAttention(name+".attn", cfg, dt, rng)
	if err != nil {
		return nil, err
	}
	attn.LipC, attn.BoundLen, attn.Bound = cfg.LipC, cfg.Context, cfg.Bound
	if cfg.LipC > 0 && cfg.Bound == ops.BoundTok2 {
		attn.AddPower(name + ".attn")
	}
	proj := residualStd(cfg.Std, max(cfg.Layers, 1))
	b := &Block{Cfg: cfg, Attn: attn, MLP: NewMLP(name+".mlp", cfg.Width, cfg.Hidden, cfg.Std, proj, dt, rng)}
	switch cfg.Norm {
	case PreLN, PostLN:
		b.LN1, b.LN2 = NewLayerNorm(name+".ln1", cfg.Width, dt), NewLayerNorm(name+".ln2", cfg.Width, dt)
	case BallPre:
		if b.Ball1, b.Ball2, err = newBallNorms(name, cfg, dt); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// newBlockAttention makes the attention of a block: GPT-2's initialisation, the output map
// scaled down with depth, temperatures and a position bias when cfg.L2Temp and cfg.PosBias
// say so, and tied L2 value maps balanced when cfg.BalanceL2 says so.
func newBlockAttention(name string, cfg BlockConfig, dt tensor.Dtype, rng *rand.Rand) (*Attention, error) {
	attn, err := NewAttention(name, cfg.Kind, cfg.Width, cfg.Heads, cfg.Causal, cfg.Std, residualStd(cfg.Std, max(cfg.Layers, 1)), dt, rng)
	if err != nil {
		return nil, err
	}
	if cfg.L2Temp {
		if err := attn.AddTemperature(name); err != nil {
			return nil, err
		}
	}
	if cfg.PosBias {
		if err := attn.AddPositionBias(name, cfg.Context); err != nil {
			return nil, err
		}
	}
	if !cfg.BalanceL2 || cfg.Kind != ops.L2 {
		return attn, nil
	}
	if _, err := attn.BalanceL2Values(); err != nil {
		return nil, err
	}
	return attn, nil
}

// Forward maps x (B*T, D) to (B*T, D); with AttnOff, through the MLP sub-block alone.
func (b *Block) Forward(g *Graph, x *G.Node) (*G.Node, error) {
	if !b.AttnOff {
		var err error
		if x, err = b.residual(g, x, b.LN1, b.Ball1, b.Attn.Forward); err != nil {
			return nil, err
		}
	}
	return b.residual(g, x, b.LN2, b.Ball2, b.MLP.Forward)
}

// residual applies one sub-block f around x with its LayerNorm ln or BallNorm ball placed
// per the config.
func (b *Block) residual(g *Graph, x *G.Node, ln *LayerNorm, ball *BallNorm, f func(*Graph, *G.Node) (*G.Node, error)) (*G.Node, error) {
	in := x
	var err error
	switch b.Cfg.Norm {
	case PreLN:
		in, err = ln.Forward(g, x)
	case BallPre:
		in, err = ball.Forward(g, x)
	}
	if err != nil {
		return nil, err
	}
	y, err := f(g, in)
	if err != nil {
		return nil, err
	}
	if y, err = g.Dropout(y, b.Cfg.Dropout); err != nil {
		return nil, err
	}
	if y, err = ops.Add(x, y); err != nil {
		return nil, err
	}
	if b.Cfg.Norm == PostLN {
		return ln.Forward(g, y)
	}
	return y, nil
}

// Params returns the block's parameters.
func (b *Block) Params() []*Param {
	ps := b.Attn.Params()
	ps = append(ps, b.MLP.Fc.W, b.MLP.Fc.B, b.MLP.Proj.W, b.MLP.Proj.B)
	if b.LN1 != nil {
		ps = append(ps, b.LN1.Gain, b.LN1.Bias, b.LN2.Gain, b.LN2.Bias)
	}
	if b.Ball1 != nil {
		ps = append(ps, b.Ball1.LogRadius, b.Ball2.LogRadius)
	}
	return ps
}

// newBallNorms makes the two BallNorms of a block with Norm BallPre, named ball1 and ball2.
func newBallNorms(name string, cfg BlockConfig, dt tensor.Dtype) (*BallNorm, *BallNorm, error) {
	b1, err := NewBallNorm(name+".ball1", cfg.Width, cfg.BallRadius, dt)
	if err != nil {
		return nil, nil, err
	}
	b2, err := NewBallNorm(name+".ball2", cfg.Width, cfg.BallRadius, dt)
	return b1, b2, err
}
