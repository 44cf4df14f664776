package ops

import (
	"fmt"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// DropoutMask is the mask of one dropout site: an input of the graph holding 0 for dropped
// elements and 1/(1-p) for kept ones. It is drawn anew by Resample before each step, so the
// mask of a step is a pure function of (seed, stream) and a resumed run redraws it exactly.
type DropoutMask struct {
	P    float64
	node *G.Node       // the mask's input node
	mask *tensor.Dense // same shape as the dropped tensor
}

// Dropout returns x with each element dropped with probability p and the kept ones scaled
// by 1/(1-p), and the mask that decides which. With p == 0 it returns x and a nil mask: use
// p = 0 for evaluation graphs. The gradient through a kept element is exactly 1/(1-p).
func Dropout(x *G.Node, p float64) (*G.Node, *DropoutMask, error) {
	if p < 0 || p >= 1 {
		return nil, nil, fmt.Errorf("dropout: probability %g, want 0 <= p < 1", p)
	}
	if p == 0 {
		return x, nil, nil
	}
	if err := checkFloat("dropout", x.Dtype()); err != nil {
		return nil, nil, err
	}
	m := tensor.New(tensor.Of(x.Dtype()), tensor.WithShape(x.Shape().Clone()...))
	mn := G.NodeFromAny(x.Graph(), m, G.WithName(fmt.Sprintf("dropout_mask_%d", x.ID())))
	y, err := mulMask(x, mn)
	if err != nil {
		return nil, nil, err
	}
	d := &DropoutMask{P: p, node: mn, mask: m}
	d.Resample(0, 0)
	return y, d, nil
}

// Resample draws the mask from the PCG stream (seed, stream): callers pass their run seed
// and a counter unique to the step and the dropout site.
func (d *DropoutMask) Resample(seed, stream uint64) {
	rng := rand.New(rand.NewPCG(seed, stream))
	keep := 1 / (1 - d.P)
	switch v := d.mask.Data().(type) {
	case []float32:
		fillMask(v, rng, d.P, float32(keep))
	case []float64:
		fillMask(v, rng, d.P, keep)
	}
}

// fillMask sets each element to 0 with probability p and to keep otherwise.
func fillMask[T kernel.Float](v []T, rng *rand.Rand, p float64, keep T) {
	for i := range v {
		if rng.Float64() < p {
			v[i] = 0
		} else {
			v[i] = keep
		}
	}
}
