package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"lipformer/layers"
	"lipformer/lipschitz"
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

// Factor is the certified Lipschitz constant of one part of the network, for sequences of
// the model's context length, in the inf-norm and the 2-norm of the whole sequence.
type Factor struct {
	Name string `json:"name"` // h0.attn, h0.mlp, ..., lnf, head
	Inf  Bound  `json:"inf"`
	Two  Bound  `json:"two"`
	Note string `json:"note,omitempty"` // what dominates or breaks the bound
}

// Certificate holds the certified Lipschitz constants of a model's parts and their
// product, an upper bound for the map from the embedded sequence (B = 1, T = context) to
// the logits.
type Certificate struct {
	Arch    string   `json:"arch"`
	N       int      `json:"n"`
	Factors []Factor `json:"factors"`
	Inf     Bound    `json:"product_inf"`
	Two     Bound    `json:"product_two"`
}

// Certificate computes the certified constants from the current weights: each residual
// sub-block x + f(x) is bounded by 1 + Lip(f) (times or inside its LayerNorm's constant,
// as the block places it), and the network by the product of its parts.
func (m *Model) Certificate() (*Certificate, error) {
	n := m.Cfg.Context
	c := &Certificate{Arch: m.Cfg.Arch, N: n, Inf: 1, Two: 1}
	for i, b := range m.Blocks {
		attn, err := attentionFactor(b.Attn, n)
		if err != nil {
			return nil, err
		}
		mlp := Factor{Inf: Bound(b.MLP.LipschitzInf()), Two: Bound(b.MLP.Lipschitz2())}
		for _, part := range []struct {
			name string
			f    Factor
			ln   *layers.LayerNorm
		}{{"attn", attn, b.LN1}, {"mlp", mlp, b.LN2}} {
			f, err := residualFactor(part.f, part.ln, b.Cfg.Norm)
			if err != nil {
				return nil, err
			}
			f.Name = fmt.Sprintf("h%d.%s", i, part.name)
			c.add(f)
		}
	}
	for i, b := range m.Inv {
		attn, err := attentionFactor(b.Attn, n)
		if err != nil {
			return nil, err
		}
		if b.VNorm != nil {
			attn.Note = fmt.Sprintf("naive dp normalisation assumes %.3g, which is no bound", b.NaiveAttnLipschitz2())
		}
		fc, pr := b.MLP.Fc, b.MLP.Proj
		mlpInf := fc.C * fc.Linear.LipschitzInf() / fc.SN.Sigma() * pr.C * pr.Linear.LipschitzInf() / pr.SN.Sigma()
		attn.Name, attn.Inf, attn.Two = fmt.Sprintf("h%d.attn", i), 1+attn.Inf, 1+attn.Two
		c.add(attn)
		c.add(Factor{Name: fmt.Sprintf("h%d.mlp", i), Inf: Bound(1 + mlpInf), Two: Bound(1 + b.MLP.Lipschitz2()), Note: "spectrally normalised, ELU"})
	}
	lnInf, err := m.LNf.LipschitzInf()
	if err != nil {
		return nil, err
	}
	ln2, err := m.LNf.Lipschitz2()
	if err != nil {
		return nil, err
	}
	c.add(Factor{Name: "lnf", Inf: Bound(lnInf), Two: Bound(ln2), Note: "LayerNorm: max|gain|/sqrt(eps)"})
	if m.Head == nil {
		c.add(Factor{Name: "head", Inf: Bound(m.Tok.UnembedLipschitzInf()), Two: Bound(m.Tok.UnembedLipschitz2()), Note: "tied to the token embedding"})
	} else {
		c.add(Factor{Name: "head", Inf: Bound(m.Head.LipschitzInf()), Two: Bound(m.Head.Lipschitz2())})
	}
	return c, nil
}

// add appends a factor and multiplies it into the products.
func (c *Certificate) add(f Factor) {
	c.Factors = append(c.Factors, f)
	c.Inf *= f.Inf
	c.Two *= f.Two
}

// attentionFactor is the bound of an attention layer, infinite for dot-product and untied
// L2 attention.
func attentionFactor(a *layers.Attention, n int) (Factor, error) {
	inf, err := a.LipschitzInf(n)
	if errors.Is(err, lipschitz.ErrNotLipschitz) {
		return Factor{Inf: Bound(math.Inf(1)), Two: Bound(math.Inf(1)), Note: a.Kind.String() + " attention is not Lipschitz"}, nil
	}
	if err != nil {
		return Factor{}, err
	}
	two, err := a.Lipschitz2(n)
	if err != nil {
		return Factor{}, err
	}
	f := Factor{Inf: Bound(inf), Two: Bound(two)}
	if a.LipC > 0 {
		f.Note = fmt.Sprintf("contractive, c = %g", a.LipC)
	}
	return f, nil
}

// residualFactor bounds x + f(x) with the LayerNorm placed as norm says: pre-LN
// 1 + Lip(LN) Lip(f), post-LN Lip(LN) (1 + Lip(f)), none 1 + Lip(f).
func residualFactor(f Factor, ln *layers.LayerNorm, norm layers.Norm) (Factor, error) {
	if norm == layers.NoLN {
		return Factor{Inf: 1 + f.Inf, Two: 1 + f.Two, Note: f.Note}, nil
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
	if norm == layers.PreLN {
		return Factor{Inf: 1 + Bound(lnInf)*f.Inf, Two: 1 + Bound(ln2)*f.Two, Note: note}, nil
	}
	return Factor{Inf: Bound(lnInf) * (1 + f.Inf), Two: Bound(ln2) * (1 + f.Two), Note: note}, nil
}
