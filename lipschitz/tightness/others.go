package tightness

import (
	"lipformer/layers"
	"lipformer/lipschitz"
	"lipformer/lipschitz/search"
)

// tok2Iters is the number of alternating-ascent steps of the token norm of J per token
// (lipschitz.JacobianNormTok2).
const tok2Iters = 30

// otherBounds fills rec with this project's bounds of tied L2 layer a on n tokens
// (docs/math.md, "The product bound" and "The token-norm bound"): for an inf-norm search
// the product-form bound and rec.Lower over it; for either norm the token-norm bound, the
// token norm of J at the search's best input x (a lower bound on the token-norm
// constant, not maximised itself) and their ratio.
func (c *Config) otherBounds(a *layers.Attention, m search.Map, n int, x []float64, rec *Record) error {
	wq, err := lipschitz.HeadSlices(dense(a.WQ), c.Heads)
	if err != nil {
		return err
	}
	wv, err := lipschitz.HeadSlices(dense(a.WV), c.Heads)
	if err != nil {
		return err
	}
	wo := dense(a.WO)
	if c.Search.Norm == search.NormInf {
		product, err := lipschitz.L2MHABoundInfProduct(n, wq, wv, wo)
		if err != nil {
			return err
		}
		ratio := rec.Lower / product
		rec.UpperProduct, rec.RatioProduct = &product, &ratio
	}
	tok2, err := lipschitz.L2MHABoundTok2(n, wq, wv, wo)
	if err != nil {
		return err
	}
	j, err := search.JacobianOf(m, x)
	if err != nil {
		return err
	}
	lower, err := lipschitz.JacobianNormTok2(j, n, tok2Iters)
	if err != nil {
		return err
	}
	ratio := lower / tok2
	rec.UpperTok2, rec.LowerTok2, rec.RatioTok2 = &tok2, &lower, &ratio
	return nil
}
