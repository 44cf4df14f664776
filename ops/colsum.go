package ops

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// colSumOp sums a tensor over every axis but the last: (..., D) -> (D). It is the gradient
// of a per-feature bias or gain and is not differentiated itself.
type colSumOp struct {
	baseOp
	dims int              // rank of the input
	ws   kernel.Workspace // partial sums
}

// colSum applies colSumOp to x of the given rank.
func colSum(x *G.Node, dims int) (*G.Node, error) {
	return G.ApplyOp(&colSumOp{baseOp: baseOp{name: "ColSum"}, dims: dims}, x)
}

// Arity is 1.
func (op *colSumOp) Arity() int { return 1 }

// Type maps a tensor to a vector of the same dtype.
func (op *colSumOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(tensorType(op.dims, a), tensorType(1, a))
}

// InferShape is (D) for an input (..., D).
func (op *colSumOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s := in[0].(tensor.Shape)
	if s.Dims() < 1 {
		return nil, fmt.Errorf("colsum: input %v has no axis", s)
	}
	return tensor.Shape{s[s.Dims()-1]}, nil
}

// Do sums into a new vector.
func (op *colSumOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo sums into prealloc when it fits.
func (op *colSumOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	x, err := dense(op.name, in, 0)
	if err != nil {
		return nil, err
	}
	d := x.Shape()[x.Dims()-1]
	y := op.out.get(prealloc, x.Dtype(), tensor.Shape{d}, in)
	switch x.Dtype() {
	case tensor.Float32:
		kernel.ColSum(data[float32](y), data[float32](x), &op.ws)
	case tensor.Float64:
		kernel.ColSum(data[float64](y), data[float64](x), &op.ws)
	}
	return y, nil
}
