package layers

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"

	"lipformer/lipschitz"
	"lipformer/ops"
)

// attnBound is one form of the bound of tied L2 attention (docs/math.md, "Bounds of tied
// L2 attention"), in one place: the differentiable node a contractive layer divides by, the
// value training divides by, and the certified value at the layer's weights.
type attnBound interface {
	// node adds to g the bound of the weights as the layer applies them: wq, wv with the
	// temperatures, raw the parameters before them, wo the output map, bias the position
	// bias or nil.
	node(a *Attention, g *Graph, wq, wv, rawQ, rawV, wo, bias *G.Node) (*G.Node, error)
	// train is the value of node at the layer's weights (wq, wv as applied): what training
	// divides by.
	train(a *Attention, wq, wv []*mat.Dense, wo *mat.Dense) (float64, error)
	// certified is the bound for sequences of n tokens at the layer's weights, with exact
	// norms: inf-norm for kim and product, token norm for token2.
	certified(a *Attention, n int) (float64, error)
}

// boundOf is the bound of form f.
func boundOf(f ops.BoundForm) attnBound {
	switch f {
	case ops.BoundProduct:
		return productBound{}
	case ops.BoundTok2:
		return tok2Bound{}
	}
	return kimBound{}
}

// kimBound is Kim et al.'s inf-norm bound, not derived with a position bias.
type kimBound struct{}

func (kimBound) node(a *Attention, _ *Graph, wq, wv, _, _, wo, bias *G.Node) (*G.Node, error) {
	if bias != nil {
		return nil, errNoBias(a, ops.BoundKim)
	}
	return ops.L2BoundInf(wq, wv, wo, a.Heads, lipschitz.PhiInv(a.BoundLen))
}

func (kimBound) train(a *Attention, wq, wv []*mat.Dense, wo *mat.Dense) (float64, error) {
	if a.PosBias != nil {
		return 0, errNoBias(a, ops.BoundKim)
	}
	return lipschitz.L2MHABoundInf(a.BoundLen, wq, wv, wo)
}

func (kimBound) certified(a *Attention, n int) (float64, error) {
	if a.PosBias != nil {
		return math.Inf(1), nil
	}
	wq, wv, wo, err := a.boundWeights()
	if err != nil {
		return 0, err
	}
	return lipschitz.L2MHABoundInf(n, wq, wv, wo)
}

// productBound is the inf-norm bound from the norms of the products the Jacobian holds.
type productBound struct{}

func (productBound) node(a *Attention, _ *Graph, wq, wv, _, _, wo, bias *G.Node) (*G.Node, error) {
	if bias != nil {
		return nil, errNoBias(a, ops.BoundProduct)
	}
	return ops.L2BoundInfProduct(wq, wv, wo, a.Heads, lipschitz.PhiInv(a.BoundLen))
}

func (productBound) train(a *Attention, wq, wv []*mat.Dense, wo *mat.Dense) (float64, error) {
	if a.PosBias != nil {
		return 0, errNoBias(a, ops.BoundProduct)
	}
	return lipschitz.L2MHABoundInfProduct(a.BoundLen, wq, wv, wo)
}

func (productBound) certified(a *Attention, n int) (float64, error) {
	wq, wv, wo, err := a.boundWeights()
	if err != nil {
		return 0, err
	}
	return lipschitz.L2MHABoundInfProductBiased(n, wq, wv, wo, a.biasRows())
}

// tok2Bound is the token-norm bound, at the weights before the temperatures; training
// divides by it with power-iteration estimates of the spectral norms (AttnPower).
type tok2Bound struct{}

func (tok2Bound) node(a *Attention, g *Graph, _, _, rawQ, rawV, wo, bias *G.Node) (*G.Node, error) {
	p := a.Power
	if p == nil {
		return nil, fmt.Errorf("%s: the token-norm bound needs power-iteration vectors (AddPower)", a.WQ.Name)
	}
	return ops.L2BoundTok2(rawQ, rawV, wo, g.BufferNode(p.UQ), g.BufferNode(p.VQ), g.BufferNode(p.UN), g.BufferNode(p.VN), bias, a.Heads, a.BoundLen)
}

func (tok2Bound) train(a *Attention, _, _ []*mat.Dense, _ *mat.Dense) (float64, error) {
	return a.tok2Estimate()
}

func (tok2Bound) certified(a *Attention, n int) (float64, error) {
	rq, rv, wo, err := a.rawBoundWeights()
	if err != nil {
		return 0, err
	}
	return lipschitz.L2MHABoundTok2Biased(n, rq, rv, wo, a.biasRows())
}

// errNoBias is the error of a contractive layer with a position bias under a bound form
// derived without one.
func errNoBias(a *Attention, f ops.BoundForm) error {
	return fmt.Errorf("%s: with a position bias a contractive layer divides by the token2 bound (the %v bound takes no bias)", a.WQ.Name, f)
}
