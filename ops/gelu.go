package ops

import (
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GELU is the exact Gaussian error linear unit x * Phi(x), Phi the standard normal CDF
// (PyTorch's default, not the tanh approximation). Its Lipschitz constant is about 1.129.
func GELU(x *G.Node) (*G.Node, error) {
	if err := checkFloat("gelu", x.Dtype()); err != nil {
		return nil, err
	}
	return G.ApplyOp(&geluOp{baseOp{"GELU"}}, x)
}

// geluOp is the forward op of GELU.
type geluOp struct{ baseOp }

// Arity is 1.
func (op *geluOp) Arity() int { return 1 }

// Type maps a tensor to one of the same type.
func (op *geluOp) Type() hm.Type { return sameType(1) }

// InferShape is the input's shape.
func (op *geluOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}

// Do computes GELU into a new tensor.
func (op *geluOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo computes GELU into prealloc when it fits.
func (op *geluOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	x, err := dense(op.name, in, 0)
	if err != nil {
		return nil, err
	}
	y := output(prealloc, x.Dtype(), x.Shape(), in)
	switch x.Dtype() {
	case tensor.Float32:
		geluKernel(data[float32](y), data[float32](x))
	case tensor.Float64:
		geluKernel(data[float64](y), data[float64](x))
	}
	return y, nil
}

// DiffWRT is true for the input.
func (op *geluOp) DiffWRT(int) []bool { return []bool{true} }

// SymDiff is dx = dy * (Phi(x) + x phi(x)).
func (op *geluOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&geluGradOp{baseOp{"GELUGrad"}}, in[0], grad)
	return G.Nodes{dx}, err
}

// geluGradOp maps (x, dy) to the gradient of GELU's input.
type geluGradOp struct{ baseOp }

// Arity is 2.
func (op *geluGradOp) Arity() int { return 2 }

// Type maps two tensors to one of the same type.
func (op *geluGradOp) Type() hm.Type { return sameType(2) }

// InferShape is x's shape.
func (op *geluGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}

// Do computes the gradient into a new tensor.
func (op *geluGradOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo computes the gradient into prealloc when it fits.
func (op *geluGradOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
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
		geluGradKernel(data[float32](dx), data[float32](x), data[float32](dy))
	case tensor.Float64:
		geluGradKernel(data[float64](dx), data[float64](x), data[float64](dy))
	}
	return dx, nil
}

// geluKernel writes y = x Phi(x).
func geluKernel[T Float](y, x []T) {
	for i, v := range x {
		f := float64(v)
		y[i] = T(0.5 * f * (1 + math.Erf(f/math.Sqrt2)))
	}
}

// geluGradKernel writes dx = dy * (Phi(x) + x phi(x)).
func geluGradKernel[T Float](dx, x, dy []T) {
	const invSqrt2Pi = 0.3989422804014327
	for i, v := range x {
		f := float64(v)
		d := 0.5*(1+math.Erf(f/math.Sqrt2)) + f*invSqrt2Pi*math.Exp(-0.5*f*f)
		dx[i] = T(float64(dy[i]) * d)
	}
}
