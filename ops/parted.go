package ops

import (
	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// partedOp is the shared part of a binary op (a, b) -> y of a's shape, built as three parts:
// part 0 the forward, parts 1 and 2 its backward with respect to a and to b, which take
// (a, b, dy) and return a tensor of a's or of b's shape.
type partedOp struct {
	baseOp
	part         int
	aDims, bDims int // the ranks of a and b
}

// newPartedOp is the part of an op named name.
func newPartedOp(name string, part, aDims, bDims int) partedOp {
	return partedOp{baseOp{name: name}, part, aDims, bDims}
}

// Arity is 2 forward, 3 backward.
func (op *partedOp) Arity() int {
	if op.part == 0 {
		return 2
	}
	return 3
}

// Type maps (a, b) to a's type, and (a, b, dy) to a's (part 1) or b's (part 2).
func (op *partedOp) Type() hm.Type {
	t := hm.TypeVariable('t')
	a, b := tensorType(op.aDims, t), tensorType(op.bDims, t)
	switch op.part {
	case 0:
		return hm.NewFnType(a, b, a)
	case 1:
		return hm.NewFnType(a, b, a, a)
	}
	return hm.NewFnType(a, b, a, b)
}

// InferShape is a's shape, or b's for part 2.
func (op *partedOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if op.part == 2 {
		return in[1].(tensor.Shape).Clone(), nil
	}
	return in[0].(tensor.Shape).Clone(), nil
}

// outShape is the shape of the part's result from its dense inputs.
func (op *partedOp) outShape(vals []*tensor.Dense) tensor.Shape {
	if op.part == 2 {
		return vals[1].Shape()
	}
	return vals[0].Shape()
}

// DiffWRT is true for both inputs of the forward part.
func (op *partedOp) DiffWRT(int) []bool { return []bool{true, true} }

// inputs returns the part's inputs as dense tensors.
func (op *partedOp) inputs(in []G.Value) ([]*tensor.Dense, error) {
	vals := make([]*tensor.Dense, op.Arity())
	for i := range vals {
		var err error
		if vals[i], err = dense(op.name, in, i); err != nil {
			return nil, err
		}
	}
	return vals, nil
}

// partKernels are the kernels of a parted op, one per element type: each writes the part's
// result into out from its inputs' data in, given the first input's shape.
type partKernels interface {
	kernel32(out []float32, in [][]float32, shape tensor.Shape)
	kernel64(out []float64, in [][]float64, shape tensor.Shape)
}

// run is the UsePreallocDo of a parted op with kernels k: its inputs as dense tensors, and
// its result, of the part's shape and the first input's dtype, in prealloc when it fits or
// else in the op's kept output.
func (op *partedOp) run(k partKernels, prealloc G.Value, in []G.Value) (G.Value, error) {
	vals, err := op.inputs(in)
	if err != nil {
		return nil, err
	}
	out := op.out.get(prealloc, vals[0].Dtype(), op.outShape(vals), in)
	switch vals[0].Dtype() {
	case tensor.Float32:
		k.kernel32(data[float32](out), floats[float32](vals), vals[0].Shape())
	case tensor.Float64:
		k.kernel64(data[float64](out), floats[float64](vals), vals[0].Shape())
	}
	return out, nil
}

// partedSymDiff applies the backward parts back(1) and back(2) to (a, b, dy).
func partedSymDiff(in G.Nodes, grad *G.Node, back func(part int) G.Op) (G.Nodes, error) {
	da, err := G.ApplyOp(back(1), in[0], in[1], grad)
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(back(2), in[0], in[1], grad)
	return G.Nodes{da, db}, err
}
