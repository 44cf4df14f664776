package ops

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// Softmax is the softmax of x over its last axis, max-shifted per row so that rows far from
// any other value stay finite. With causal set, x must have its last two axes equal (T, T)
// and row i of every (T, T) block keeps only columns j <= i: the diagonal is never masked.
func Softmax(x *G.Node, causal bool) (*G.Node, error) {
	s := x.Shape()
	if s.Dims() < 1 {
		return nil, fmt.Errorf("softmax: input %v has no axis", s)
	}
	if causal && (s.Dims() < 2 || s[s.Dims()-1] != s[s.Dims()-2]) {
		return nil, fmt.Errorf("softmax: causal mask needs square last axes (..., T, T), got %v", s)
	}
	if err := checkFloat("softmax", x.Dtype()); err != nil {
		return nil, err
	}
	return G.ApplyOp(newSoftmaxOp(causal), x)
}

// softmaxOp is the forward op of Softmax.
type softmaxOp struct {
	baseOp
	causal bool
}

func newSoftmaxOp(causal bool) *softmaxOp {
	return &softmaxOp{baseOp{name: fmt.Sprintf("Softmax{causal=%t}", causal)}, causal}
}

// Arity is 1.
func (op *softmaxOp) Arity() int { return 1 }

// Type maps a tensor to a tensor of the same type.
func (op *softmaxOp) Type() hm.Type { return sameType(1) }

// InferShape is the input's shape.
func (op *softmaxOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}

// Do computes the softmax into a new tensor.
func (op *softmaxOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo computes the softmax into prealloc when it fits.
func (op *softmaxOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	x, err := dense(op.name, in, 0)
	if err != nil {
		return nil, err
	}
	y := op.out.get(prealloc, x.Dtype(), x.Shape(), in)
	n := x.Shape()[x.Dims()-1]
	switch x.Dtype() {
	case tensor.Float32:
		kernel.SoftmaxRows(data[float32](y), data[float32](x), n, op.causal)
	case tensor.Float64:
		kernel.SoftmaxRows(data[float64](y), data[float64](x), n, op.causal)
	}
	return y, nil
}

// DiffWRT is true for the only input.
func (op *softmaxOp) DiffWRT(int) []bool { return []bool{true} }

// SymDiff is dx = y * (dy - sum(y * dy)) row by row, from the output y.
func (op *softmaxOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&softmaxGradOp{baseOp{name: "SoftmaxGrad"}}, out, grad)
	return G.Nodes{dx}, err
}

// softmaxGradOp maps (y, dy) to the gradient of the input of a softmax with output y.
type softmaxGradOp struct{ baseOp }

// Arity is 2: the softmax output and the output gradient.
func (op *softmaxGradOp) Arity() int { return 2 }

// Type maps two tensors to one of the same type.
func (op *softmaxGradOp) Type() hm.Type { return sameType(2) }

// InferShape is the shape of y.
func (op *softmaxGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}

// Do computes the gradient into a new tensor.
func (op *softmaxGradOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo computes the gradient into prealloc when it fits.
func (op *softmaxGradOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	y, err := dense(op.name, in, 0)
	if err != nil {
		return nil, err
	}
	dy, err := dense(op.name, in, 1)
	if err != nil {
		return nil, err
	}
	dx := op.out.get(prealloc, y.Dtype(), y.Shape(), in)
	n := y.Shape()[y.Dims()-1]
	switch y.Dtype() {
	case tensor.Float32:
		kernel.SoftmaxGradRows(data[float32](dx), data[float32](y), data[float32](dy), n)
	case tensor.Float64:
		kernel.SoftmaxGradRows(data[float64](dx), data[float64](y), data[float64](dy), n)
	}
	return dx, nil
}
