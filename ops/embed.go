package ops

import (
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// Embed gathers rows of a table: table (V, D) and ids an Int vector (N) with entries in
// [0, V) give (N, D), row r being table row ids[r]. It is G.ByIndices(table, ids, 0)
// writing into a buffer it keeps between runs (see outBuf); its gradient scatter-adds the
// rows of dy into a (V, D) table, in parallel over columns so that the sums do not depend
// on the number of goroutines. No gradient flows to ids.
func Embed(table, ids *G.Node) (*G.Node, error) {
	ts := table.Shape()
	if ts.Dims() != 2 {
		return nil, fmt.Errorf("embed: table %v, want (V, D)", ts)
	}
	if ids.Dtype() != tensor.Int || !ids.Shape().IsVectorLike() {
		return nil, fmt.Errorf("embed: ids %v of %v, want an Int vector", ids.Shape(), ids.Dtype())
	}
	if err := checkFloat("embed", table.Dtype()); err != nil {
		return nil, err
	}
	return G.ApplyOp(&embedOp{baseOp: baseOp{name: "Embed"}}, table, ids)
}

// embedOp is the gather of Embed or (grad) its backward, which maps (table, ids, dy) to
// the gradient of the table.
type embedOp struct {
	baseOp
	grad bool
}

// Arity is 2 (table, ids), or 3 (table, ids, dy) for the gradient.
func (op *embedOp) Arity() int {
	if op.grad {
		return 3
	}
	return 2
}

// Type maps a matrix and an Int vector (and a matrix dy) to a matrix.
func (op *embedOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m, ids := G.TensorType{Dims: 2, Of: a}, G.TensorType{Dims: 1, Of: tensor.Int}
	if op.grad {
		return hm.NewFnType(m, ids, m, m)
	}
	return hm.NewFnType(m, ids, m)
}

// InferShape is (N, D), or the table's shape for the gradient.
func (op *embedOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	t, ok := in[0].(tensor.Shape)
	if !ok || t.Dims() != 2 {
		return nil, fmt.Errorf("%s: table shape %v, want (V, D)", op.name, in[0])
	}
	if op.grad {
		return t.Clone(), nil
	}
	ids, ok := in[1].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("%s: ids shape %v", op.name, in[1])
	}
	return tensor.Shape{ids.TotalSize(), t[1]}, nil
}

// Do runs the op into its kept buffer.
func (op *embedOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo runs the op into prealloc when it fits.
func (op *embedOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	table, err := dense(op.name, in, 0)
	if err != nil {
		return nil, err
	}
	idt, err := dense(op.name, in, 1)
	if err != nil {
		return nil, err
	}
	ids, ok := idt.Data().([]int)
	if !ok {
		return nil, fmt.Errorf("%s: ids are %v, want int", op.name, idt.Dtype())
	}
	v, d := table.Shape()[0], table.Shape()[1]
	for r, id := range ids {
		if id < 0 || id >= v {
			return nil, fmt.Errorf("%s: id %d of row %d is outside [0, %d)", op.name, id, r, v)
		}
	}
	if !op.grad {
		y := op.out.get(prealloc, table.Dtype(), tensor.Shape{len(ids), d}, in)
		switch table.Dtype() {
		case tensor.Float32:
			kernel.Gather(data[float32](y), data[float32](table), ids, d)
		case tensor.Float64:
			kernel.Gather(data[float64](y), data[float64](table), ids, d)
		}
		return y, nil
	}
	dy, err := dense(op.name, in, 2)
	if err != nil {
		return nil, err
	}
	if !dy.Shape().Eq(tensor.Shape{len(ids), d}) {
		return nil, fmt.Errorf("%s: gradient %v, want (%d, %d)", op.name, dy.Shape(), len(ids), d)
	}
	dt := op.out.get(prealloc, table.Dtype(), table.Shape(), in)
	switch table.Dtype() {
	case tensor.Float32:
		kernel.ScatterAdd(data[float32](dt), data[float32](dy), ids, d)
	case tensor.Float64:
		kernel.ScatterAdd(data[float64](dt), data[float64](dy), ids, d)
	}
	return dt, nil
}

// DiffWRT is true for the table only.
func (op *embedOp) DiffWRT(int) []bool { return []bool{true, false} }

// SymDiff applies the scatter-add to (table, ids, dy); the table is read for its shape.
func (op *embedOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	if op.grad {
		return nil, fmt.Errorf("%s: second derivatives are not implemented", op.name)
	}
	dt, err := G.ApplyOp(&embedOp{baseOp: baseOp{name: "EmbedGrad"}, grad: true}, in[0], in[1], grad)
	return G.Nodes{dt, nil}, err
}
