package ops

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// AddBias adds a bias vector b (D) to every row of x (..., D), without materialising a
// broadcast copy of b.
func AddBias(x, b *G.Node) (*G.Node, error) {
	xs, bs := x.Shape(), b.Shape()
	if xs.Dims() < 1 || bs.TotalSize() != xs[xs.Dims()-1] || !bs.IsVectorLike() {
		return nil, fmt.Errorf("add bias: x %v and bias %v, want (..., D) and (D)", xs, bs)
	}
	if x.Dtype() != b.Dtype() {
		return nil, fmt.Errorf("add bias: x is %v, bias is %v", x.Dtype(), b.Dtype())
	}
	return G.ApplyOp(&biasOp{baseOp{name: "AddBias"}, xs.Dims()}, x, b)
}

// biasOp is the op of AddBias.
type biasOp struct {
	baseOp
	dims int // rank of x
}

// Arity is 2.
func (op *biasOp) Arity() int { return 2 }

// Type maps a tensor and a vector to a tensor of the first's type.
func (op *biasOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(tensorType(op.dims, a), tensorType(1, a), tensorType(op.dims, a))
}

// InferShape is x's shape.
func (op *biasOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}

// Do adds into a new tensor.
func (op *biasOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo adds into prealloc when it fits.
func (op *biasOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	x, err := dense(op.name, in, 0)
	if err != nil {
		return nil, err
	}
	b, err := dense(op.name, in, 1)
	if err != nil {
		return nil, err
	}
	y := op.out.get(prealloc, x.Dtype(), x.Shape(), in)
	switch x.Dtype() {
	case tensor.Float32:
		kernel.AddBias(data[float32](y), data[float32](x), data[float32](b))
	case tensor.Float64:
		kernel.AddBias(data[float64](y), data[float64](x), data[float64](b))
	}
	return y, nil
}

// DiffWRT is true for both inputs.
func (op *biasOp) DiffWRT(int) []bool { return []bool{true, true} }

// SymDiff is dx = dy and db = the column sums of dy.
func (op *biasOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	db, err := colSum(grad, op.dims)
	return G.Nodes{grad, db}, err
}
