package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"lipformer/layers"
	"lipformer/lipschitz"
	"lipformer/ops"
	"lipformer/spec"
)

// Bound is a Lipschitz upper bound; +Inf means none exists (dot-product attention). It is
// written to JSON as a number, or null when infinite.
type Bound float64

// MarshalJSON writes the bound, or null when it is infinite.
func (b Bound) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(b), 1) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(b))
}

// UnmarshalJSON reads a number, or null as +Inf.
func (b *Bound) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*b = Bound(math.Inf(1))
		return nil
	}
	var v float64
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*b = Bound(v)
	return nil
}

// Factor is the certified Lipschitz constant of one part of the network, for sequences of
// the model's context length, in the inf-norm and the 2-norm of the whole sequence, and in
// the token norm max_i ||x_i||_2 (a map acting on each token alone has its token 2-norm
// constant there).
type Factor struct {
	Name string `json:"name"` // h0.attn, h0.mlp, ..., lnf, head
	Inf  Bound  `json:"inf"`
	Two  Bound  `json:"two"`
	Tok2 Bound  `json:"tok2"`
	Note string `json:"note,omitempty"` // what dominates or breaks the bound
}

// Certificate holds the certified Lipschitz constants of a model's parts and their
// product, an upper bound for the map from the embedded sequence (B = 1, T = context) to
// the logits.
type Certificate struct {
	Arch    spec.Arch `json:"arch"`
	N       int       `json:"n"`
	Factors []Factor  `json:"factors"`
	Inf     Bound     `json:"product_inf"`
	Two     Bound     `json:"product_two"`
	Tok2    Bound     `json:"product_tok2"`
	// TokenDiameter is Model.TokenDiameter, the largest token-norm distance between two
	// embedded texts of the same length, or a bound of it (DiameterBound).
	TokenDiameter float64 `json:"token_diameter"`
	// DiameterBound says that TokenDiameter is the bound twice TokenRadius, not the largest
	// distance between two rows searched pair by pair: a table of more than 8192 rows.
	DiameterBound bool `json:"token_diameter_bound,omitempty"`
	// LogitRange is Tok2 times TokenDiameter: at every position, the logits of any two
	// texts of the same length differ by at most this in the 2-norm. Unlike Tok2 it does
	// not change when the embeddings and what reads them are rescaled together.
	LogitRange Bound `json:"logit_range"`
	// TokenRadius is the radius of Model.TokenBall, a ball holding every token vector.
	TokenRadius float64 `json:"token_radius"`
	// LogitRadius is Tok2 times TokenRadius: at every position, every text's logits lie
	// within this of one point in the 2-norm, the radius ngram.Floor and the bounded
	// n-grams take (docs/math.md, "What a logit ball allows").
	LogitRadius Bound `json:"logit_radius"`
}

// Certificate computes the certified constants from the current weights: each residual
// sub-block x + f(x) is bounded by 1 + Lip(f) (times or inside its LayerNorm's constant,
// as the block places it), and the network by the product of its parts.
func (m *Model) Certificate() (*Certificate, error) {
	n := m.Cfg.Context
	c := &Certificate{Arch: m.Cfg.Arch, N: n, Inf: 1, Two: 1, Tok2: 1}
	for i, b := range m.Blocks {
		var fs []Factor
		var err error
		switch b := b.(type) {
		case *layers.Block:
			fs, err = plainBlockFactors(i, b, n)
		case *layers.InvertibleBlock:
			fs, err = invertibleBlockFactors(i, b, n)
		default:
			err = fmt.Errorf("certificate: block %T", b)
		}
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			c.add(f)
		}
	}
	final, err := m.finalFactor()
	if err != nil {
		return nil, err
	}
	c.add(final)
	c.add(m.headFactor())
	c.TokenDiameter, c.DiameterBound = m.TokenDiameter(), m.distancesBounded()
	if c.TokenDiameter > 0 { // else every text of a length has the same input, and 0 is right
		c.LogitRange = c.Tok2 * Bound(c.TokenDiameter)
	}
	if _, c.TokenRadius = m.TokenBall(); c.TokenRadius > 0 {
		c.LogitRadius = c.Tok2 * Bound(c.TokenRadius)
	}
	return c, nil
}

// finalFactor bounds the final normalisation: a LayerNorm by max|gain|/sqrt(eps), the ball
// norm of a model bounded end to end by 1 per token.
func (m *Model) finalFactor() (Factor, error) {
	switch f := m.Final.(type) {
	case *layers.LayerNorm:
		inf, err := f.LipschitzInf()
		if err != nil {
			return Factor{}, err
		}
		two, err := f.Lipschitz2()
		if err != nil {
			return Factor{}, err
		}
		return Factor{Name: "lnf", Inf: Bound(inf), Two: Bound(two), Tok2: Bound(two), Note: "LayerNorm: max|gain|/sqrt(eps)"}, nil
	case *layers.BallNorm:
		return Factor{Name: "lnf", Inf: Bound(f.LipschitzInf()), Two: Bound(f.Lipschitz2()), Tok2: Bound(f.Lipschitz2()), Note: "ball norm"}, nil
	}
	return Factor{}, fmt.Errorf("certificate: final normalisation %T", m.Final)
}

// headFactor bounds the head: the exact norms of its weight as applied (the token table
// transposed when tied, HeadGain W / sigma when spectrally normalised).
func (m *Model) headFactor() Factor {
	switch {
	case m.Head == nil:
		return Factor{Name: "head", Inf: Bound(m.Tok.UnembedLipschitzInf()), Two: Bound(m.Tok.UnembedLipschitz2()), Tok2: Bound(m.Tok.UnembedLipschitz2()), Note: "tied to the token embedding"}
	case m.HeadSN != nil:
		s := m.Cfg.HeadGain() / m.HeadSN.Sigma()
		two := Bound(s * m.Head.Lipschitz2())
		return Factor{Name: "head", Inf: Bound(s * m.Head.LipschitzInf()), Two: two, Tok2: two, Note: fmt.Sprintf("spectrally normalised to %.4g", m.Cfg.HeadGain())}
	}
	return Factor{Name: "head", Inf: Bound(m.Head.LipschitzInf()), Two: Bound(m.Head.Lipschitz2()), Tok2: Bound(m.Head.Lipschitz2())}
}

// Diameter names TokenDiameter as the printed reports say it: the token embedding's
// diameter, or with DiameterBound the bound it is.
func (c *Certificate) Diameter() string {
	if c.DiameterBound {
		return "twice the radius of a ball holding the token vectors, a bound of their diameter,"
	}
	return "the token embedding's diameter"
}

// add appends a factor and multiplies it into the products.
func (c *Certificate) add(f Factor) {
	c.Factors = append(c.Factors, f)
	c.Inf *= f.Inf
	c.Two *= f.Two
	c.Tok2 *= f.Tok2
}

// attentionFactor is the bound of an attention layer, infinite for dot-product and untied
// L2 attention.
func attentionFactor(a *layers.Attention, n int) (Factor, error) {
	inf, err := a.LipschitzInf(n)
	if errors.Is(err, lipschitz.ErrNotLipschitz) {
		return Factor{Inf: Bound(math.Inf(1)), Two: Bound(math.Inf(1)), Tok2: Bound(math.Inf(1)), Note: a.Kind.String() + " attention is not Lipschitz"}, nil
	}
	if err != nil {
		return Factor{}, err
	}
	two, err := a.Lipschitz2(n)
	if err != nil {
		return Factor{}, err
	}
	tok2, err := a.LipschitzTok2(n)
	if err != nil {
		return Factor{}, err
	}
	f := Factor{Inf: Bound(inf), Two: Bound(two), Tok2: Bound(tok2)}
	if a.LipC > 0 {
		f.Note = fmt.Sprintf("contractive in the %s bound, c = %g", a.Bound, a.LipC)
	}
	return f, nil
}

// residualFactor bounds x + f(x) with the LayerNorm ln or BallNorm ball placed as norm
// says: pre-LN 1 + Lip(LN) Lip(f), post-LN Lip(LN) (1 + Lip(f)), ball 1 + Lip(B) Lip(f),
// none 1 + Lip(f).
func residualFactor(f Factor, ln *layers.LayerNorm, ball *layers.BallNorm, norm spec.Norm) (Factor, error) {
	switch norm {
	case spec.NoLN:
		return Factor{Inf: 1 + f.Inf, Two: 1 + f.Two, Tok2: 1 + f.Tok2, Note: f.Note}, nil
	case spec.BallPre:
		inf, two := Bound(ball.LipschitzInf()), Bound(ball.Lipschitz2())
		note := fmt.Sprintf("ball norm factor %.3g (inf) / %.3g (2, token)", float64(inf), float64(two))
		if f.Note != "" {
			note = f.Note + "; " + note
		}
		return Factor{Inf: 1 + inf*f.Inf, Two: 1 + two*f.Two, Tok2: 1 + two*f.Tok2, Note: note}, nil
	}
	lnInf, err := ln.LipschitzInf()
	if err != nil {
		return Factor{}, err
	}
	ln2, err := ln.Lipschitz2()
	if err != nil {
		return Factor{}, err
	}
	note := fmt.Sprintf("LayerNorm factor %.3g (inf) / %.3g (2)", lnInf, ln2)
	if f.Note != "" {
		note = f.Note + "; " + note
	}
	if norm == spec.PreLN {
		return Factor{Inf: 1 + Bound(lnInf)*f.Inf, Two: 1 + Bound(ln2)*f.Two, Tok2: 1 + Bound(ln2)*f.Tok2, Note: note}, nil
	}
	return Factor{Inf: Bound(lnInf) * (1 + f.Inf), Two: Bound(ln2) * (1 + f.Two), Tok2: Bound(ln2) * (1 + f.Tok2), Note: note}, nil
}

// mixFactors are the factor of block i's mixing sub-block x + X(x), without normalisation,
// or none for nil: 1 + Lip(X), the mix being a convex combination of tokens (1-Lipschitz
// in each norm) and W' its exact norms.
func mixFactors(i int, x *layers.Mix) []Factor {
	if x == nil {
		return nil
	}
	note := "causal mix"
	if x.SN != nil {
		note = fmt.Sprintf("causal mix, spectrally normalised to c = %g", x.C)
	}
	two := 1 + Bound(x.Lipschitz2())
	return []Factor{{Name: fmt.Sprintf("h%d.mix", i), Inf: 1 + Bound(x.LipschitzInf()), Two: two, Tok2: two, Note: note}}
}

// plainBlockFactors are the factors of block i, a plain block, for sequences of n tokens.
func plainBlockFactors(i int, b *layers.Block, n int) ([]Factor, error) {
	fs := mixFactors(i, b.Mix)
	attn, err := attentionFactor(b.Attn, n)
	if err != nil {
		return nil, err
	}
	mlp := Factor{Inf: Bound(b.MLP.LipschitzInf()), Two: Bound(b.MLP.Lipschitz2()), Tok2: Bound(b.MLP.Lipschitz2())}
	for _, part := range []struct {
		name string
		f    Factor
		ln   *layers.LayerNorm
		ball *layers.BallNorm
	}{{"attn", attn, b.LN1, b.Ball1}, {"mlp", mlp, b.LN2, b.Ball2}} {
		f, err := residualFactor(part.f, part.ln, part.ball, b.Norm)
		if err != nil {
			return nil, err
		}
		f.Name = fmt.Sprintf("h%d.%s", i, part.name)
		fs = append(fs, f)
	}
	return fs, nil
}

// invertibleBlockFactors are the factors of block i, an invertible block, for sequences of n tokens.
func invertibleBlockFactors(i int, b *layers.InvertibleBlock, n int) ([]Factor, error) {
	fs := mixFactors(i, b.Mix)
	attn, err := attentionFactor(b.Attn, n)
	if err != nil {
		return nil, err
	}
	if b.VNorm != nil {
		attn.Note = fmt.Sprintf("naive dp normalisation assumes %.3g, which is no bound", b.NaiveAttnLipschitz2())
	}
	norm := spec.NoLN
	if b.Ball1 != nil {
		norm = spec.BallPre
	}
	type part struct {
		name string
		f    Factor
		ball *layers.BallNorm
	}
	parts := []part{{"attn", attn, b.Ball1}}
	for k, m := range b.MLPs {
		fc, pr := m.Fc, m.Proj
		mlpInf := fc.C * fc.Linear.LipschitzInf() / fc.SN.Sigma() * pr.C * pr.Linear.LipschitzInf() / pr.SN.Sigma()
		mlp := Factor{Inf: Bound(mlpInf), Two: Bound(m.Lipschitz2()), Tok2: Bound(m.Lipschitz2()), Note: activationNote(m.Act)}
		parts = append(parts, part{layers.MLPName(k), mlp, b.Ball2})
	}
	for _, part := range parts {
		f, err := residualFactor(part.f, nil, part.ball, norm)
		if err != nil {
			return nil, err
		}
		f.Name = fmt.Sprintf("h%d.%s", i, part.name)
		fs = append(fs, f)
	}
	return fs, nil
}

// activationNote is the certificate's note on an invertible MLP branch with activation act,
// 1-Lipschitz in both norms (docs/math.md, "MaxMin").
func activationNote(act ops.Activation) string {
	if act == ops.ActMaxMin {
		return "spectrally normalised, MaxMin"
	}
	return "spectrally normalised, ELU"
}
