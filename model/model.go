package model

import (
	"fmt"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"

	"lipformer/layers"
	"lipformer/ops"
)

// Model is the byte-level language model of docs/math.md, "The language model": token and position embeddings,
// Layers blocks, a final normalisation and a linear head to the vocabulary.
type Model struct {
	Cfg    Config
	Tok    *layers.Embedding    // (V, D)
	Pos    *layers.Embedding    // (T, D)
	Blocks []layers.Residual    // *layers.Block, or *layers.InvertibleBlock for invertible architectures
	Final  layers.Normalization // *layers.LayerNorm, or the *layers.BallNorm of a model bounded by Cfg.LipK
	Head   *layers.Linear       // (D, V), no bias; nil when Cfg.Tie (the head is Tok.W^T)
	// HeadSN is the spectral normalisation of Head.W in a model bounded by Cfg.LipK, whose
	// head applies Cfg.HeadGain() W / sigma; nil otherwise.
	HeadSN *layers.SpectralNorm
}

// New builds a model with weights initialised from seed as in GPT-2: N(0, std^2), the
// residual projections scaled by 1/sqrt(2 layers), zero biases, unit LayerNorm gains.
// With cfg.Tie the head shares the token table, which is then weight-decayed like a matrix.
// An invertible architecture has no LayerNorm in its blocks: its config's Norm, unless ball,
// becomes none.
func New(cfg Config, seed uint64) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.Built()
	dt := cfg.Dtype.Tensor()
	rng := rand.New(rand.NewPCG(seed, 0x6c6970666f726d))
	m := &Model{
		Cfg: cfg,
		Tok: layers.NewEmbedding("tok", cfg.TokenRows(), cfg.Width, cfg.EffectiveEmbedStd(), dt, rng),
		Pos: layers.NewEmbedding("pos", cfg.Context, cfg.Width, cfg.EffectiveEmbedStd(), dt, rng),
	}
	m.Tok.Radius = cfg.EmbedRadius
	if cfg.LipK > 0 {
		ball, err := layers.NewBallNorm("lnf", cfg.Width, cfg.EffectiveBallRadius(), dt)
		if err != nil {
			return nil, err
		}
		m.Final = ball
	} else {
		m.Final = layers.NewLayerNorm("lnf", cfg.Width, dt)
	}
	for i := 0; i < cfg.Layers; i++ {
		name := fmt.Sprintf("h%d", i)
		var b layers.Residual
		var err error
		if cfg.Arch.Invertible() {
			b, err = layers.NewInvertibleBlock(name, cfg, rng)
		} else {
			b, err = layers.NewBlock(name, cfg, rng)
		}
		if err != nil {
			return nil, err
		}
		m.Blocks = append(m.Blocks, b)
	}
	if cfg.Tie {
		m.Tok.W.Decay = true
		return m, nil
	}
	m.Head = layers.NewLinear("head", cfg.Width, cfg.Vocab, false, cfg.Std, dt, rng)
	if cfg.LipK > 0 {
		m.HeadSN = layers.NewSpectralNorm(m.Head.W, rng)
	}
	return m, nil
}

// Params returns every parameter in the order a forward pass first uses them: the one
// list that gradients, checkpoints, weight decay and counts read (NewProgram checks that
// its graph uses exactly these, in this order).
func (m *Model) Params() []*layers.Param {
	ps := append(m.Tok.Params(), m.Pos.Params()...)
	for _, b := range m.Blocks {
		ps = append(ps, b.Params()...)
	}
	ps = append(ps, m.Final.Params()...)
	if m.Head != nil {
		ps = append(ps, m.Head.Params()...)
	}
	return ps
}

// Matrices returns the blocks' weight matrices, the weight-decayed parameters of two
// dimensions inside the blocks, in Params' order: what Muon updates
// (train.AdamConfig.Muon); not the embeddings, the final normalisation or the head.
func (m *Model) Matrices() []*layers.Param {
	var ps []*layers.Param
	for _, b := range m.Blocks {
		for _, p := range b.Params() {
			if p.Decay && p.Value.Dims() == 2 {
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// NumParams is the number of scalar parameters.
func (m *Model) NumParams() int {
	n := 0
	for _, p := range m.Params() {
		n += p.Value.Shape().TotalSize()
	}
	return n
}

// logits adds the model to g for the token ids (B*T) and returns the logits (B*T, V).
func (m *Model) logits(g *layers.Graph, ids *G.Node) (*G.Node, error) {
	tok, err := m.Tok.Forward(g, ids) // (B*T, D)
	if err != nil {
		return nil, err
	}
	pos, err := m.Pos.Positions(g) // (B*T, D)
	if err != nil {
		return nil, err
	}
	x, err := G.Add(tok, pos)
	if err != nil {
		return nil, err
	}
	for _, b := range m.Blocks {
		if x, err = b.Forward(g, x); err != nil {
			return nil, err
		}
	}
	if x, err = m.Final.Forward(g, x); err != nil {
		return nil, err
	}
	return m.head(g, x)
}

// head maps the final hidden states x (B*T, D) to logits (B*T, V).
func (m *Model) head(g *layers.Graph, x *G.Node) (*G.Node, error) {
	switch {
	case m.Head == nil:
		return m.Tok.Unembed(g, x)
	case m.HeadSN != nil:
		w, err := m.HeadSN.Weight(g, m.Cfg.HeadGain()) // (D, V)
		if err != nil {
			return nil, err
		}
		return ops.Linear(x, nil, w)
	}
	return m.Head.Forward(g, x)
}
