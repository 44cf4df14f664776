package ops

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// Add is the elementwise sum a + b of two tensors of one shape: the residual connection of
// a block. Unlike G.Add it writes into a buffer it keeps between runs (see outBuf). Its
// gradient passes the output gradient to both inputs unchanged.
func Add(a, b *G.Node) (*G.Node, error) {
	if err := sameShape("add", a, b); err != nil {
		return nil, err
	}
	return G.ApplyOp(&binaryOp{baseOp: baseOp{name: "Add"}, dims: a.Dims(), mul: false}, a, b)
}

// mulMask is x * m elementwise with m held fixed: no gradient flows to m, and dx is
// mulMask(dy, m). Dropout applies its mask with it.
func mulMask(x, m *G.Node) (*G.Node, error) {
	if err := sameShape("mask", x, m); err != nil {
		return nil, err
	}
	return G.ApplyOp(&binaryOp{baseOp: baseOp{name: "MulMask"}, dims: x.Dims(), mul: true}, x, m)
}

// sameShape returns an error unless a and b are float tensors of one dtype and shape.
func sameShape(op string, a, b *G.Node) error {
	if !a.Shape().Eq(b.Shape()) || a.Dtype() != b.Dtype() {
		return fmt.Errorf("%s: %v %v and %v %v, want one dtype and shape", op, a.Dtype(), a.Shape(), b.Dtype(), b.Shape())
	}
	return checkFloat(op, a.Dtype())
}

// binaryOp is a + b, or (mul) a * b with b a fixed mask.
type binaryOp struct {
	baseOp
	dims int // rank of the inputs
	mul  bool
}

// Arity is 2.
func (op *binaryOp) Arity() int { return 2 }

// Type maps two tensors to a tensor of the same type.
func (op *binaryOp) Type() hm.Type {
	t := tensorType(op.dims, hm.TypeVariable('a'))
	return hm.NewFnType(t, t, t)
}

// InferShape is the inputs' shape.
func (op *binaryOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}

// Do computes into the kept buffer.
func (op *binaryOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo computes into prealloc when it fits.
func (op *binaryOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	a, err := dense(op.name, in, 0)
	if err != nil {
		return nil, err
	}
	b, err := dense(op.name, in, 1)
	if err != nil {
		return nil, err
	}
	if !a.Shape().Eq(b.Shape()) || a.Dtype() != b.Dtype() {
		return nil, fmt.Errorf("%s: inputs %v and %v", op.name, a.Shape(), b.Shape())
	}
	y := op.out.get(prealloc, a.Dtype(), a.Shape(), in)
	switch {
	case a.Dtype() == tensor.Float32 && op.mul:
		kernel.Mul(data[float32](y), data[float32](a), data[float32](b))
	case a.Dtype() == tensor.Float32:
		kernel.Add(data[float32](y), data[float32](a), data[float32](b))
	case op.mul:
		kernel.Mul(data[float64](y), data[float64](a), data[float64](b))
	default:
		kernel.Add(data[float64](y), data[float64](a), data[float64](b))
	}
	return y, nil
}

// DiffWRT is true for both summands, or for x alone when multiplying by a mask.
func (op *binaryOp) DiffWRT(int) []bool { return []bool{true, !op.mul} }

// SymDiff is (dy, dy) for the sum and (dy * m, none) for the mask.
func (op *binaryOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	if !op.mul {
		return G.Nodes{grad, grad}, nil
	}
	dx, err := mulMask(grad, in[1])
	return G.Nodes{dx, nil}, err
}
