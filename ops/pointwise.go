package ops

import (
	"errors"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// pointwise is an elementwise activation given by its function and derivative, evaluated
// in float64 for either precision.
type pointwise struct {
	name  string
	f, df func(float64) float64
}

// apply adds y = f(x) elementwise to x's graph.
func (p pointwise) apply(x *G.Node) (*G.Node, error) {
	if err := checkFloat(p.name, x.Dtype()); err != nil {
		return nil, err
	}
	return G.ApplyOp(&pointwiseOp{baseOp{p.name}, p, false}, x)
}

// pointwiseOp is y = f(x), or (grad) the input gradient dx = dy * f'(x) from (x, dy).
type pointwiseOp struct {
	baseOp
	fn   pointwise
	grad bool
}

// Arity is 1, or 2 for the gradient.
func (op *pointwiseOp) Arity() int {
	if op.grad {
		return 2
	}
	return 1
}

// Type maps tensors to a tensor of the same type.
func (op *pointwiseOp) Type() hm.Type { return sameType(op.Arity()) }

// InferShape is the input's shape.
func (op *pointwiseOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}

// Do computes into a new tensor.
func (op *pointwiseOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo computes into prealloc when it fits.
func (op *pointwiseOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	x, err := dense(op.name, in, 0)
	if err != nil {
		return nil, err
	}
	y := output(prealloc, x.Dtype(), x.Shape(), in)
	if !op.grad {
		switch x.Dtype() {
		case tensor.Float32:
			mapKernel(data[float32](y), data[float32](x), op.fn.f)
		case tensor.Float64:
			mapKernel(data[float64](y), data[float64](x), op.fn.f)
		}
		return y, nil
	}
	dy, err := dense(op.name, in, 1)
	if err != nil {
		return nil, err
	}
	switch x.Dtype() {
	case tensor.Float32:
		chainKernel(data[float32](y), data[float32](x), data[float32](dy), op.fn.df)
	case tensor.Float64:
		chainKernel(data[float64](y), data[float64](x), data[float64](dy), op.fn.df)
	}
	return y, nil
}

// DiffWRT is true for x.
func (op *pointwiseOp) DiffWRT(int) []bool { return []bool{true} }

// SymDiff is dx = dy * f'(x); the gradient op itself is not differentiable.
func (op *pointwiseOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	if op.grad {
		return nil, errors.New(op.name + ": second derivatives are not implemented")
	}
	dx, err := G.ApplyOp(&pointwiseOp{baseOp{op.name + "Grad"}, op.fn, true}, in[0], grad)
	return G.Nodes{dx}, err
}

// mapKernel writes y = f(x).
func mapKernel[T Float](y, x []T, f func(float64) float64) {
	for i, v := range x {
		y[i] = T(f(float64(v)))
	}
}

// chainKernel writes dx = dy * df(x).
func chainKernel[T Float](dx, x, dy []T, df func(float64) float64) {
	for i, v := range x {
		dx[i] = T(float64(dy[i]) * df(float64(v)))
	}
}
