package ops

import (
	"errors"
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// pointwise is an elementwise activation given by its function and derivative, evaluated
// in float64, and optionally by faster float32 kernels on slices (nil: float32 uses f and
// df too).
type pointwise struct {
	name  string
	f, df func(float64) float64
	f32   func(y, x []float32)      // y = f(x)
	df32  func(dx, x, dy []float32) // dx = dy * f'(x)
}

// apply adds y = f(x) elementwise to x's graph.
func (p pointwise) apply(x *G.Node) (*G.Node, error) {
	if err := checkFloat(p.name, x.Dtype()); err != nil {
		return nil, err
	}
	return G.ApplyOp(&pointwiseOp{baseOp{name: p.name}, p, false}, x)
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
	y := op.out.get(prealloc, x.Dtype(), x.Shape(), in)
	var dy *tensor.Dense
	if op.grad {
		if dy, err = dense(op.name, in, 1); err != nil {
			return nil, err
		}
		if !dy.Shape().Eq(x.Shape()) {
			return nil, fmt.Errorf("%s: gradient %v for input %v", op.name, dy.Shape(), x.Shape())
		}
	}
	switch x.Dtype() {
	case tensor.Float32:
		pointwiseKernel(op.fn, data[float32](y), data[float32](x), dataOrNil[float32](dy))
	case tensor.Float64:
		pointwiseKernel(op.fn, data[float64](y), data[float64](x), dataOrNil[float64](dy))
	}
	return y, nil
}

// dataOrNil is data(d), or nil for a nil tensor.
func dataOrNil[T Float](d *tensor.Dense) []T {
	if d == nil {
		return nil
	}
	return data[T](d)
}

// pointwiseKernel writes y = f(x), or with dy non-nil the gradient dy * f'(x), in
// parallel chunks.
func pointwiseKernel[T Float](fn pointwise, y, x, dy []T) {
	f, df := sliceKernels[T](fn)
	parallelFor(len(x), 1, func(_, lo, hi int) {
		if dy == nil {
			f(y[lo:hi], x[lo:hi])
			return
		}
		df(y[lo:hi], x[lo:hi], dy[lo:hi])
	})
}

// DiffWRT is true for x.
func (op *pointwiseOp) DiffWRT(int) []bool { return []bool{true} }

// SymDiff is dx = dy * f'(x); the gradient op itself is not differentiable.
func (op *pointwiseOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	if op.grad {
		return nil, errors.New(op.name + ": second derivatives are not implemented")
	}
	dx, err := G.ApplyOp(&pointwiseOp{baseOp{name: op.name + "Grad"}, op.fn, true}, in[0], grad)
	return G.Nodes{dx}, err
}

// sliceKernels returns fn's kernels on slices of T: its float32 kernels when T is float32
// and it has them, loops over f and df otherwise.
func sliceKernels[T Float](fn pointwise) (func(y, x []T), func(dx, x, dy []T)) {
	f := func(y, x []T) { mapKernel(y, x, fn.f) }
	df := func(dx, x, dy []T) { chainKernel(dx, x, dy, fn.df) }
	if k, ok := any(fn.f32).(func(y, x []T)); ok && k != nil {
		f = k
	}
	if k, ok := any(fn.df32).(func(dx, x, dy []T)); ok && k != nil {
		df = k
	}
	return f, df
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
