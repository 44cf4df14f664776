package model

import (
	"fmt"

	"lipformer/layers"
	"lipformer/ops"
)

// AttnReport describes one tied L2 attention layer of a model at its current weights, for
// sequences of the model's context: its bounds before the contractive scale in each form
// (+Inf where none is derived), the scale it applies, and its certified constants. The
// looseness of a bound is its ratio to a measured lower bound (lipschitz/search).
type AttnReport struct {
	Name     string    `json:"name"`  // h0.attn, ...
	Form     string    `json:"bound"` // the bound a contractive layer divides by; "" for plain attention
	Kim      Bound     `json:"kim"`   // inf-norm, Kim et al.
	Product  Bound     `json:"product"`
	Tok2     Bound     `json:"token2"` // token norm, exact spectral norms
	Scale    float64   `json:"scale"`  // min(1, c / bound), 1 for plain attention
	CertInf  Bound     `json:"certified_inf"`
	CertTok2 Bound     `json:"certified_token2"`
	LogTemp  []float64 `json:"log_temperatures,omitempty"`
	BiasPrev []float64 `json:"bias_previous,omitempty"` // b_h[1] - b_h[0]: how much head h favours the previous token over itself
}

// AttentionReport returns an AttnReport for every tied L2 attention layer, in block order;
// other attention kinds have no bound and are left out.
func (m *Model) AttentionReport() ([]AttnReport, error) {
	n := m.Cfg.Context
	var out []AttnReport
	for i, a := range m.Attentions() {
		if a.Kind != ops.L2 {
			continue
		}
		r := AttnReport{Name: fmt.Sprintf("h%d.attn", i)}
		if a.LipC > 0 {
			r.Form = a.Bound.String()
		}
		for _, f := range []struct {
			form ops.BoundForm
			dst  *Bound
		}{{ops.BoundKim, &r.Kim}, {ops.BoundProduct, &r.Product}, {ops.BoundTok2, &r.Tok2}} {
			v, err := a.RawBound(f.form, n)
			if err != nil {
				return nil, err
			}
			*f.dst = Bound(v)
		}
		var err error
		if r.Scale, err = a.Scale(); err != nil {
			return nil, err
		}
		inf, err := a.LipschitzInf(n)
		if err != nil {
			return nil, err
		}
		tok2, err := a.LipschitzTok2(n)
		if err != nil {
			return nil, err
		}
		r.CertInf, r.CertTok2 = Bound(inf), Bound(tok2)
		if a.LogTemp != nil {
			r.LogTemp = a.LogTemp.Float64s()
		}
		if a.PosBias != nil {
			r.BiasPrev = biasPrevious(a)
		}
		out = append(out, r)
	}
	return out, nil
}

// biasPrevious is b_h[1] - b_h[0] for every head of a layer with a position bias.
func biasPrevious(a *layers.Attention) []float64 {
	b, t := a.PosBias.Float64s(), a.PosBias.Value.Shape()[1]
	out := make([]float64, a.Heads)
	for h := range out {
		if t > 1 {
			out[h] = b[h*t+1] - b[h*t]
		}
	}
	return out
}
