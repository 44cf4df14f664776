package ops

import (
	"errors"
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// pointwise is an elementwise activation given by its kernels on slices in both
// precisions. Its derivative is read from x, or with fromOutput from y = f(x), which the
// backward then takes in place of x.
type pointwise struct {
	name       string
	f32        func(y, x []float32)      // y = f(x)
	f64        func(y, x []float64)      // y = f(x)
	df32       func(dx, x, dy []float32) // dx = dy * f'(x), x being y with fromOutput
	df64       func(dx, x, dy []float64) // dx = dy * f'(x), x being y with fromOutput
	fromOutput bool
}

// apply adds y = f(x) elementwise to x's graph.
func (p pointwise) apply(x *G.Node) (*G.Node, error) {
	if err := checkFloat(p.name, x.Dtype()); err != nil {
		return nil, err
	}
	return G.ApplyOp(&pointwiseOp{baseOp{name: p.name}, p, false}, x)
}

// pointwiseOp is y = f(x), or (grad) the input gradient dx = dy * f'(x) from (x, dy), or
// from (y, dy) for an activation whose derivative is read from its output.
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
	switch {
	case x.Dtype() == tensor.Float32 && dy == nil:
		op.fn.f32(data[float32](y), data[float32](x))
	case x.Dtype() == tensor.Float32:
		op.fn.df32(data[float32](y), data[float32](x), data[float32](dy))
	case dy == nil:
		op.fn.f64(data[float64](y), data[float64](x))
	default:
		op.fn.df64(data[float64](y), data[float64](x), data[float64](dy))
	}
	return y, nil
}

// DiffWRT is true for x.
func (op *pointwiseOp) DiffWRT(int) []bool { return []bool{true} }

// SymDiff is dx = dy * f'(x), from x or from the output; the gradient op itself is not
// differentiable.
func (op *pointwiseOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	if op.grad {
		return nil, errors.New(op.name + ": second derivatives are not implemented")
	}
	from := in[0]
	if op.fn.fromOutput {
		from = out
	}
	dx, err := G.ApplyOp(&pointwiseOp{baseOp{name: op.name + "Grad"}, op.fn, true}, from, grad)
	return G.Nodes{dx}, err
}
