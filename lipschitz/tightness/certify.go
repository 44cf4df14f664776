package tightness

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"lipformer/lipschitz/search"
	"lipformer/model"
	"lipformer/ops"
	"lipformer/spec"
)

// AttnLooseness is one tied L2 attention layer of a model: its bounds and certified
// constants, and with a search the best measured lower bounds and the certified constants at
// the search's N, whose ratio is the looseness.
type AttnLooseness struct {
	model.AttnReport
	Lower       *search.LowerBounds `json:"lower,omitempty"`
	CertInfAtN  model.Bound         `json:"certified_inf_at_n,omitempty"`
	CertTok2AtN model.Bound         `json:"certified_token2_at_n,omitempty"`
}

// Certification is a model's certificate with its attention layers' looseness; its JSON
// form is the certificate's with an "attention" array.
type Certification struct {
	*model.Certificate
	Attention []AttnLooseness `json:"attention"`
	// Whole is a searched lower bound of the whole model in the token norm
	// (model.Model.LowerBound), or nil without the search.
	Whole *model.WholeLower `json:"whole_lower,omitempty"`
	// WholeLooseness is the certified token-norm constant over Whole's lower bound: absent
	// without the search, null when the certificate is infinite or the bound found is 0.
	WholeLooseness model.Bound `json:"whole_looseness,omitempty"`
	// N is the number of tokens of the searches, 0 without.
	N int `json:"-"`
	// Cfg is the model's configuration: which sub-blocks' branches are held to its c.
	Cfg model.Config `json:"-"`
}

// Certify returns the Lipschitz certificate of m and its attention layers' bounds; with
// n > 0 it also searches each tied L2 attention layer for lower bounds on sequences of n
// tokens (o's starts and steps; search.LayerLowerBounds), and with whole > 0 the whole
// model on that many random windows (model.Model.LowerBound, seeded by o.Seed). progress,
// if not nil, is called after each start of the layer searches with the starts done and
// their total, and wholeProgress after each Jacobian block of the whole-model search with
// the blocks done and their total.
func Certify(m *model.Model, n int, o search.Options, whole int, progress, wholeProgress func(done, total int)) (*Certification, error) {
	cert, err := m.Certificate()
	if err != nil {
		return nil, err
	}
	attn, err := looseness(m, n, o, progress)
	if err != nil {
		return nil, err
	}
	c := &Certification{Certificate: cert, Attention: attn, N: n, Cfg: m.Cfg}
	if whole > 0 {
		if c.Whole, err = m.LowerBound(whole, wholeIters, o.Seed, wholeProgress); err != nil {
			return nil, err
		}
		c.WholeLooseness = cert.Tok2 / model.Bound(c.Whole.Best)
	}
	return c, nil
}

// wholeIters is the power iterations per Jacobian block of the whole-model search: they
// reach the block's spectral norm to 1e-5 in the tests at 200, and within 1% at 30.
const wholeIters = 30

// WriteTable prints the certificate of the model at path as tables: its factors and
// products, then its attention layers' bounds and, with a search, their looseness.
func (c *Certification) WriteTable(w io.Writer, path string) error {
	if err := certTable(w, path, c.Certificate); err != nil {
		return err
	}
	fmt.Fprint(w, subBlockNote(c.Certificate, c.Cfg))
	if c.Whole != nil {
		fmt.Fprintf(w, "whole model, token norm: certified %s, searched lower bound %.4g (the largest block J_ji of the Jacobian, row j = %d, token i = %d, over %d random windows), looseness %s\n",
			show(c.Tok2), c.Whole.Best, c.Whole.Row, c.Whole.Col, c.Whole.Windows, ratio(c.Tok2, c.Whole.Best))
		parts := make([]string, len(c.Whole.Blocks))
		for k, b := range c.Whole.Blocks {
			parts[k] = fmt.Sprintf("J_%d,%d %.4g", b.Row, b.Col, b.Best)
		}
		fmt.Fprintf(w, "  each block searched, the largest met: %s (j = i: a position's own token; j > i: an earlier one)\n", strings.Join(parts, ", "))
	}
	return loosenessTable(w, c.Attention, c.N)
}

// looseness reports every tied L2 attention layer of m, with lower bounds at searchN tokens
// when searchN > 0 (on a float64 copy of the model), calling progress as Certify says.
func looseness(m *model.Model, searchN int, o search.Options, progress func(done, total int)) ([]AttnLooseness, error) {
	reports, err := m.AttentionReport()
	if err != nil || searchN < 1 || len(reports) == 0 {
		out := make([]AttnLooseness, len(reports))
		for i, r := range reports {
			out[i].AttnReport = r
		}
		return out, err
	}
	m64, err := m.WithDtype(spec.Float64)
	if err != nil {
		return nil, err
	}
	layers := m64.Attentions()
	var done func()
	if progress != nil {
		total, n := 2*o.Starts*len(reports), 0 // two norms per tied L2 layer
		done = func() { n++; progress(n, total) }
	}
	out := make([]AttnLooseness, 0, len(reports))
	for _, a := range layers {
		if a.Kind != ops.L2 {
			continue
		}
		r := AttnLooseness{AttnReport: reports[len(out)]}
		lb, err := search.LayerLowerBounds(a, searchN, o, done)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Name, err)
		}
		inf, err := a.LipschitzInf(searchN)
		if err != nil {
			return nil, err
		}
		tok2, err := a.LipschitzTok2(searchN)
		if err != nil {
			return nil, err
		}
		r.Lower, r.CertInfAtN, r.CertTok2AtN = &lb, model.Bound(inf), model.Bound(tok2)
		out = append(out, r)
	}
	return out, nil
}

// loosenessTable prints the attention layers' bounds, scales and certified constants, and
// with a search the lower bounds and the ratios certified / lower.
func loosenessTable(w io.Writer, attn []AttnLooseness, searchN int) error {
	if len(attn) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\ntied L2 attention: bounds before the contractive scale (inf-norm: Kim et al., product; token norm), the scale, certified constants")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "layer\tdivides by\tkim\tproduct\ttoken2\tscale\tcert inf\tcert token2\t"
	if searchN > 0 {
		head += fmt.Sprintf("lower inf (N=%d)\tlower token2\tinf looseness\ttoken2 looseness\t", searchN)
	}
	fmt.Fprintln(tw, head)
	for _, a := range attn {
		form := a.Form
		if form == "" {
			form = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.4g\t%s\t%s\t", a.Name, form, show(a.Kim), show(a.Product), show(a.Tok2), a.Scale, show(a.CertInf), show(a.CertTok2))
		if a.Lower != nil {
			fmt.Fprintf(tw, "%.4g\t%.4g\t%s\t%s\t", a.Lower.Inf, a.Lower.Tok2, ratio(a.CertInfAtN, a.Lower.Inf), ratio(a.CertTok2AtN, a.Lower.Tok2))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// ratio formats certified / lower, "none" without a certificate.
func ratio(cert model.Bound, lower float64) string {
	if math.IsInf(float64(cert), 1) || !(lower > 0) {
		return "none"
	}
	return fmt.Sprintf("%.3g", float64(cert)/lower)
}

// certTable prints the certificate's factors and products.
func certTable(w io.Writer, path string, cert *model.Certificate) error {
	fmt.Fprintf(w, "%s: %s, N = %d (certified upper bounds; none for dot-product attention)\n", path, cert.Arch, cert.N)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "part\tinf-norm\t2-norm\ttoken-norm\t\tnote")
	for _, f := range cert.Factors {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\t%s\n", f.Name, show(f.Inf), show(f.Two), show(f.Tok2), f.Note)
	}
	fmt.Fprintf(tw, "product\t%s\t%s\t%s\t\t\n", show(cert.Inf), show(cert.Two), show(cert.Tok2))
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "certified logit range %s: token-norm product x %s %.4g; no text moves any position's logits further from another's (docs/math.md)\n", show(cert.LogitRange), cert.Diameter(), cert.TokenDiameter); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "certified logit radius %s: token-norm product x the radius %.4g of a ball holding the token vectors; every text's logits at a position lie within it of one point (eval -logit-radius: the floor it sets)\n", show(cert.LogitRadius), cert.TokenRadius)
	return err
}

// aboveC is the relative excess over c from which subBlockNote names a branch: below it
// the difference is rounding.
const aboveC = 1e-6

// subBlockNote says what the sub-block rows of the certificate are, 1 + Lip(g) of x + g(x)
// against the branch constants c of the attention table, and, for every sub-block whose
// branch is held to c and measures above it, why: the spectral normalisations and the
// token-norm attention bounds divide by power-iteration estimates, which trail the weights
// as they move (an estimate of a largest singular value is at most the true one), while
// the certificate is computed from the weights themselves.
func subBlockNote(cert *model.Certificate, cfg model.Config) string {
	var b strings.Builder
	if cfg.Mix > 0 {
		b.WriteString("h*.mix, ")
	}
	b.WriteString("h*.attn and h*.mlp are residual sub-blocks x + g(x): certified 1 + Lip(g)")
	switch cfg.Norm {
	case spec.PreLN:
		b.WriteString(" with Lip(g) times its LayerNorm's factor")
	case spec.PostLN:
		b.WriteString(" times its LayerNorm's factor")
	case spec.BallPre:
		b.WriteString(" with Lip(g) times its ball norm's factor")
	}
	if cfg.Mix > 0 && (cfg.Norm == spec.BallPre || !cfg.Arch.Invertible() && cfg.Norm != spec.NoLN) {
		b.WriteString(" (h*.mix has none)")
	}
	switch {
	case cfg.Arch.Invertible():
		fmt.Fprintf(&b, "; -lip-c holds every branch g (the attention table's certified columns for attention) to c = %g", cfg.LipC)
	case cfg.Arch.Contractive():
		fmt.Fprintf(&b, "; -lip-c holds the attention branches g (the attention table's certified columns) to c = %g", cfg.LipC)
	}
	if cfg.Arch.Contractive() && cfg.Norm == spec.NoLN {
		b.WriteString(", their sub-blocks to 1 + c")
	}
	b.WriteString("\n")
	if cfg.Norm != spec.NoLN || !cfg.Arch.Contractive() {
		return b.String()
	}
	var above []string
	for _, f := range cert.Factors {
		held := strings.HasSuffix(f.Name, ".attn") ||
			(cfg.Arch.Invertible() && (strings.Contains(f.Name, ".mlp") || strings.HasSuffix(f.Name, ".mix"))) // h0.mlp, h0.mlp1, ..., h0.mix
		if g := float64(f.Tok2) - 1; held && !math.IsInf(g, 1) && g > cfg.LipC*(1+aboveC) {
			above = append(above, fmt.Sprintf("%s %.6g", f.Name, g))
		}
	}
	if len(above) > 0 {
		fmt.Fprintf(&b, "branches above c = %g in the token norm: %s. They are scaled by power-iteration estimates of their weights' largest singular values, which trail the weights as training moves them (an estimate is at most the true value); this certificate is computed from the weights themselves. More -power-iters per training step, or invert -power-iters, bring them closer to c (docs/math.md)\n",
			cfg.LipC, strings.Join(above, ", "))
	}
	return b.String()
}

// show formats a bound, "none" when infinite.
func show(b model.Bound) string {
	if math.IsInf(float64(b), 1) {
		return "none"
	}
	return fmt.Sprintf("%.4g", float64(b))
}
