package ops

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// LayerNorm normalises every row of x (..., D) over its D features and applies a gain and a
// bias: y = gamma * (x - mean) / sqrt(var + eps) + beta, with the biased variance (as
// PyTorch). gamma and beta are vectors (D).
func LayerNorm(x, gamma, beta *G.Node, eps float64) (*G.Node, error) {
	xs := x.Shape()
	if xs.Dims() < 1 {
		return nil, fmt.Errorf("layernorm: input %v has no axis", xs)
	}
	d := xs[xs.Dims()-1]
	for _, p := range []*G.Node{gamma, beta} {
		if p.Shape().TotalSize() != d || !p.Shape().IsVectorLike() || p.Dtype() != x.Dtype() {
			return nil, fmt.Errorf("layernorm: %s is %v %v, want a %v vector of %d", p.Name(), p.Dtype(), p.Shape(), x.Dtype(), d)
		}
	}
	if !(eps > 0) {
		return nil, fmt.Errorf("layernorm: eps %g, want > 0", eps)
	}
	if err := checkFloat("layernorm", x.Dtype()); err != nil {
		return nil, err
	}
	return G.ApplyOp(&layerNormOp{baseOp{name: fmt.Sprintf("LayerNorm{eps=%g}", eps)}, eps, xs.Dims()}, x, gamma, beta)
}

// layerNormOp is the forward op of LayerNorm.
type layerNormOp struct {
	baseOp
	eps  float64
	dims int // rank of x
}

// Arity is 3: x, gamma, beta.
func (op *layerNormOp) Arity() int { return 3 }

// Type maps (tensor, vector, vector) to a tensor of the first's type.
func (op *layerNormOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	x, v := tensorType(op.dims, a), tensorType(1, a)
	return hm.NewFnType(x, v, v, x)
}

// InferShape is x's shape.
func (op *layerNormOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}

// Do normalises into a new tensor.
func (op *layerNormOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo normalises into prealloc when it fits.
func (op *layerNormOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	x, gamma, beta, err := layerNormInputs(op.name, in)
	if err != nil {
		return nil, err
	}
	y := op.out.get(prealloc, x.Dtype(), x.Shape(), in)
	switch x.Dtype() {
	case tensor.Float32:
		kernel.LayerNormRows(data[float32](y), data[float32](x), data[float32](gamma), data[float32](beta), op.eps)
	case tensor.Float64:
		kernel.LayerNormRows(data[float64](y), data[float64](x), data[float64](gamma), data[float64](beta), op.eps)
	}
	return y, nil
}

// DiffWRT is true for every input.
func (op *layerNormOp) DiffWRT(int) []bool { return []bool{true, true, true} }

// SymDiff returns the gradients of x and gamma (fused kernels recomputing the row
// statistics) and of beta (the column sums of dy).
func (op *layerNormOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&layerNormGradOp{baseOp: baseOp{name: "LayerNormGradX"}, eps: op.eps, dims: op.dims}, in[0], in[1], grad)
	if err != nil {
		return nil, err
	}
	dgamma, err := G.ApplyOp(&layerNormGradOp{baseOp: baseOp{name: "LayerNormGradGamma"}, eps: op.eps, dims: op.dims, gain: true}, in[0], in[1], grad)
	if err != nil {
		return nil, err
	}
	dbeta, err := colSum(grad, op.dims)
	return G.Nodes{dx, dgamma, dbeta}, err
}

// layerNormGradOp maps (x, gamma, dy) to the gradient of x, or of gamma when gain is set.
type layerNormGradOp struct {
	baseOp
	eps  float64
	dims int // rank of x
	gain bool
	ws   kernel.Workspace // partial sums of the gain's gradient
}

// Arity is 3: x, gamma, dy.
func (op *layerNormGradOp) Arity() int { return 3 }

// Type maps (tensor, vector, tensor) to a tensor (the gradient of x) or a vector (of gamma).
func (op *layerNormGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	x, v := tensorType(op.dims, a), tensorType(1, a)
	if op.gain {
		return hm.NewFnType(x, v, x, v)
	}
	return hm.NewFnType(x, v, x, x)
}

// InferShape is x's shape, or gamma's.
func (op *layerNormGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if op.gain {
		return in[1].(tensor.Shape).Clone(), nil
	}
	return in[0].(tensor.Shape).Clone(), nil
}

// Do computes the gradient into a new tensor.
func (op *layerNormGradOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo computes the gradient into prealloc when it fits.
func (op *layerNormGradOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	x, gamma, dy, err := layerNormInputs(op.name, in)
	if err != nil {
		return nil, err
	}
	shape := x.Shape()
	if op.gain {
		shape = gamma.Shape()
	}
	d := op.out.get(prealloc, x.Dtype(), shape, in)
	switch x.Dtype() {
	case tensor.Float32:
		layerNormGrad(op, data[float32](d), data[float32](x), data[float32](gamma), data[float32](dy))
	case tensor.Float64:
		layerNormGrad(op, data[float64](d), data[float64](x), data[float64](gamma), data[float64](dy))
	}
	return d, nil
}

// layerNormGrad writes the gradient of x, or with op.gain of gamma, into out.
func layerNormGrad[T kernel.Float](op *layerNormGradOp, out, x, gamma, dy []T) {
	if op.gain {
		kernel.LayerNormGainGrad(out, x, dy, op.eps, &op.ws)
		return
	}
	kernel.LayerNormGrad(out, x, gamma, dy, op.eps)
}

// layerNormInputs returns the three dense inputs of a LayerNorm op or of its gradient.
func layerNormInputs(op string, in []G.Value) (a, b, c *tensor.Dense, err error) {
	if a, err = dense(op, in, 0); err != nil {
		return
	}
	if b, err = dense(op, in, 1); err != nil {
		return
	}
	c, err = dense(op, in, 2)
	return
}
