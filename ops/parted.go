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

// partedSymDiff applies the backward parts back(1) and back(2) to (a, b, dy).
func partedSymDiff(in G.Nodes, grad *G.Node, back func(part int) G.Op) (G.Nodes, error) {
	da, err := G.ApplyOp(back(1), in[0], in[1], grad)
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(back(2), in[0], in[1], grad)
	return G.Nodes{da, db}, err
}
