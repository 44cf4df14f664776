package tightness

import (
	"errors"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"

	"lipformer/layers"
	"lipformer/lipschitz"
	"lipformer/lipschitz/search"
	"lipformer/ops"
)

// newLayer builds the attention layer of c: every map the (D, D) identity for
// WeightsUnit, or N(0, 1/D) entries drawn from the seed for WeightsRandom.
func (c *Config) newLayer() (*layers.Attention, error) {
	std := 1 / math.Sqrt(float64(c.Dim))
	rng := rand.New(rand.NewPCG(c.Search.Seed, 0x3e16))
	a, err := layers.NewAttention("attn", c.Kind, c.Dim, c.Heads, c.Causal, std, std, tensor.Float64, rng)
	if err != nil || c.Weights == WeightsRandom {
		return a, err
	}
	for _, p := range a.Params() {
		v := p.Value.Data().([]float64)
		clear(v)
		for k := range c.Dim {
			v[k*c.Dim+k] = 1
		}
	}
	return a, nil
}

// newMaps returns c.Workers independent maps of layer a on n tokens, and a
// function that releases them.
func (c *Config) newMaps(a *layers.Attention, n int) ([]search.Map, func(), error) {
	var maps []search.Map
	var graphs []*search.GraphMap
	release := func() {
		for _, g := range graphs {
			g.Close()
		}
	}
	for range c.Workers {
		if c.useScalar() {
			s, err := search.ScalarFromLayer(a, n)
			if err != nil {
				return nil, release, err
			}
			maps = append(maps, s)
			continue
		}
		g, err := search.NewGraphMap(a, n, 0)
		if err != nil {
			return nil, release, err
		}
		graphs = append(graphs, g)
		maps = append(maps, g)
	}
	return maps, release, nil
}

// errNoBound says that a layer has no upper bound (dot-product attention).
var errNoBound = errors.New("no upper bound")

// upperBounds returns the upper bound on Lip_p of tied L2 layer a on n tokens
// (the corrected 2-norm bound for the 2-norm) and, for the 2-norm, docs/math.md's
// formula as stated (which is not a bound for large W^Q). It returns
// errNoBound for dot-product attention.
func (c *Config) upperBounds(a *layers.Attention, n int) (upper, asStated float64, err error) {
	if c.Kind != ops.L2 {
		return 0, 0, errNoBound
	}
	wq, err := lipschitz.HeadSlices(dense(a.WQ), c.Heads)
	if err != nil {
		return 0, 0, err
	}
	wv, err := lipschitz.HeadSlices(dense(a.WV), c.Heads)
	if err != nil {
		return 0, 0, err
	}
	wo := dense(a.WO)
	if c.Search.Norm == search.NormInf {
		upper, err = lipschitz.L2MHABoundInf(n, wq, wv, wo)
		return upper, 0, err
	}
	if upper, err = lipschitz.L2MHABound2(n, wq, wv, wo); err != nil {
		return 0, 0, err
	}
	asStated, err = lipschitz.L2MHABound2AsStated(n, wq, wv, wo)
	return upper, asStated, err
}

// dense copies a (D, D) float64 parameter into a gonum matrix.
func dense(p *layers.Param) *mat.Dense {
	s := p.Value.Shape()
	return mat.NewDense(s[0], s[1], append([]float64(nil), p.Value.Data().([]float64)...))
}
