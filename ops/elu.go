package ops

import (
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ELU is the exponential linear unit with alpha = 1: x for x > 0, e^x - 1 otherwise. Its
// derivative lies in (0, 1], so it is 1-Lipschitz, and it is continuously differentiable:
// the activation of the spectrally normalised MLP of invertible blocks (SPEC section 3).
func ELU(x *G.Node) (*G.Node, error) {
	if err := checkFloat("elu", x.Dtype()); err != nil {
		return nil, err
	}
	return G.ApplyOp(&eluOp{baseOp{"ELU"}}, x)
}

// eluOp is the forward op of ELU.
type eluOp struct{ baseOp }

// Arity is 1.
func (op *eluOp) Arity() int { return 1 }

// Type maps a tensor to one of the same type.
func (op *eluOp) Type() hm.Type { return sameType(1) }

// InferShape is the input's shape.
func (op *eluOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}

// Do computes ELU into a new tensor.
func (op *eluOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo computes ELU into prealloc when it fits.
func (op *eluOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	x, err := dense(op.name, in, 0)
	if err != nil {
		return nil, err
	}
	y := output(prealloc, x.Dtype(), x.Shape(), in)
	switch x.Dtype() {
	case tensor.Float32:
		eluKernel(data[float32](y), data[float32](x))
	case tensor.Float64:
		eluKernel(data[float64](y), data[float64](x))
	}
	return y, nil
}

// DiffWRT is true for the input.
func (op *eluOp) DiffWRT(int) []bool { return []bool{true} }

// SymDiff is dx = dy for x > 0 and dy e^x otherwise.
func (op *eluOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&eluGradOp{baseOp{"ELUGrad"}}, in[0], grad)
	return G.Nodes{dx}, err
}

// eluGradOp maps (x, dy) to the gradient of ELU's input.
type eluGradOp struct{ baseOp }

// Arity is 2.
func (op *eluGradOp) Arity() int { return 2 }

// Type maps two tensors to one of the same type.
func (op *eluGradOp) Type() hm.Type { return sameType(2) }

// InferShape is x's shape.
func (op *eluGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}

// Do computes the gradient into a new tensor.
func (op *eluGradOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo computes the gradient into prealloc when it fits.
func (op *eluGradOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	x, err := dense(op.name, in, 0)
	if err != nil {
		return nil, err
	}
	dy, err := dense(op.name, in, 1)
	if err != nil {
		return nil, err
	}
	dx := output(prealloc, x.Dtype(), x.Shape(), in)
	switch x.Dtype() {
	case tensor.Float32:
		eluGradKernel(data[float32](dx), data[float32](x), data[float32](dy))
	case tensor.Float64:
		eluGradKernel(data[float64](dx), data[float64](x), data[float64](dy))
	}
	return dx, nil
}

// eluKernel writes y = ELU(x).
func eluKernel[T Float](y, x []T) {
	for i, v := range x {
		if v > 0 {
			y[i] = v
		} else {
			y[i] = T(math.Expm1(float64(v)))
		}
	}
}

// eluGradKernel writes dx = dy * ELU'(x).
func eluGradKernel[T Float](dx, x, dy []T) {
	for i, v := range x {
		if v > 0 {
			dx[i] = dy[i]
		} else {
			dx[i] = T(float64(dy[i]) * math.Exp(float64(v)))
		}
	}
}
