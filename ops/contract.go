package ops

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// Contract scales x by min(1, c / ub), with ub a positive scalar node (a Lipschitz upper
// bound of the map that produced x): the result is c-Lipschitz whenever ub bounds x's map.
// Gradients flow to x and, while the scale is below 1, to ub, like spectral normalisation.
func Contract(x, ub *G.Node, c float64) (*G.Node, error) {
	if !ub.IsScalar() || ub.Dtype() != x.Dtype() {
		return nil, fmt.Errorf("contract: bound %v of %v, want a %v scalar", ub.Shape(), ub.Dtype(), x.Dtype())
	}
	if !(c > 0) {
		return nil, fmt.Errorf("contract: coefficient %g, want > 0", c)
	}
	if err := checkFloat("contract", x.Dtype()); err != nil {
		return nil, err
	}
	return G.ApplyOp(newContractOp(c, x.Dims(), false), x, ub)
}

// contractOp is Contract, or (grad) the gradient of the bound: (x, ub, dy) -> scalar.
type contractOp struct {
	baseOp
	c    float64
	dims int
	grad bool
}

func newContractOp(c float64, dims int, grad bool) *contractOp {
	return &contractOp{baseOp{name: fmt.Sprintf("Contract{c=%g,grad=%t}", c, grad)}, c, dims, grad}
}

// Arity is 2, or 3 for the gradient of the bound.
func (op *contractOp) Arity() int {
	if op.grad {
		return 3
	}
	return 2
}

// Type maps (tensor, scalar) to a tensor, or (tensor, scalar, tensor) to a scalar.
func (op *contractOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	x := tensorType(op.dims, a)
	if op.grad {
		return hm.NewFnType(x, a, x, a)
	}
	return hm.NewFnType(x, a, x)
}

// InferShape is x's shape, or a scalar.
func (op *contractOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if op.grad {
		return tensor.ScalarShape(), nil
	}
	return in[0].(tensor.Shape).Clone(), nil
}

// scale is min(1, c/ub).
func (op *contractOp) scale(ub float64) float64 { return min(1, op.c/ub) }

// Do computes the scaled tensor, or the gradient of the bound.
func (op *contractOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo computes into prealloc when it fits.
func (op *contractOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	x, err := dense(op.name, in, 0)
	if err != nil {
		return nil, err
	}
	ub, err := scalar(in[1])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op.name, err)
	}
	if math.IsNaN(ub) || math.IsInf(ub, 0) {
		return nil, fmt.Errorf("%s: bound %g: %w", op.name, ub, ErrNonFinite)
	}
	if !(ub > 0) {
		return nil, fmt.Errorf("%s: bound %g, want > 0", op.name, ub)
	}
	s := op.scale(ub)
	if !op.grad {
		y := op.out.get(prealloc, x.Dtype(), x.Shape(), in)
		switch x.Dtype() {
		case tensor.Float32:
			kernel.Scale(data[float32](y), data[float32](x), float32(s))
		case tensor.Float64:
			kernel.Scale(data[float64](y), data[float64](x), s)
		}
		return y, nil
	}
	dy, err := dense(op.name, in, 2)
	if err != nil {
		return nil, err
	}
	var g float64 // d/dub of min(1, c/ub) <x, dy>
	if s < 1 {
		var xy float64
		switch x.Dtype() {
		case tensor.Float32:
			xy = kernel.Dot(data[float32](x), data[float32](dy))
		case tensor.Float64:
			xy = kernel.Dot(data[float64](x), data[float64](dy))
		}
		g = -op.c / (ub * ub) * xy
	}
	if x.Dtype() == tensor.Float32 {
		return G.NewF32(float32(g)), nil
	}
	return G.NewF64(g), nil
}

// DiffWRT is true for x and the bound.
func (op *contractOp) DiffWRT(int) []bool { return []bool{true, true} }

// SymDiff is dx = Contract(dy, ub, c) and dub = -c/ub^2 <x, dy> while c/ub < 1.
func (op *contractOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(newContractOp(op.c, op.dims, false), grad, in[1])
	if err != nil {
		return nil, err
	}
	dub, err := G.ApplyOp(newContractOp(op.c, op.dims, true), in[0], in[1], grad)
	return G.Nodes{dx, dub}, err
}
