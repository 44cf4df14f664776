package ops

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// baseOp carries the boilerplate shared by the ops of this package: no external calls, no
// input overwritten, hashes derived from the op's String, and the output tensor the op
// keeps between runs (see outBuf).
type baseOp struct {
	name string
	out  outBuf
}

// ReturnsPtr reports that the op returns a new value, not a pointer into an input.
func (op baseOp) ReturnsPtr() bool { return false }

// CallsExtern reports that the op runs on the CPU in Go.
func (op baseOp) CallsExtern() bool { return false }

// OverwritesInput reports that no input is overwritten.
func (op baseOp) OverwritesInput() int { return -1 }

// String is the op's name with its parameters.
func (op baseOp) String() string { return op.name }

// WriteHash writes the op's name to h.
func (op baseOp) WriteHash(h hash.Hash) { fmt.Fprint(h, op.name) }

// Hashcode is the FNV hash of the op's name.
func (op baseOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

// OpBase is baseOp for custom ops of other packages (such as expressive's pairwise
// softplus sums): the same boilerplate methods and a kept output buffer. Embed the pointer
// NewOpBase returns, so that every copy of the op value shares the buffer.
type OpBase struct{ baseOp }

// NewOpBase returns the base of an op named name; the name must identify the operation and
// its parameters, since Gorgonia merges nodes with equal hashes and children.
func NewOpBase(name string) *OpBase { return &OpBase{baseOp{name: name}} }

// Output returns the tensor the op writes its result into, as outBuf.get: prealloc if it
// fits, else the tensor kept from earlier runs. Its old contents must all be overwritten.
func (b *OpBase) Output(prealloc G.Value, dt tensor.Dtype, shape tensor.Shape, in []G.Value) *tensor.Dense {
	return b.out.get(prealloc, dt, shape, in)
}

// Keeper is an op that keeps values beyond its output between runs (the activations,
// weights and gradients of MLPResidual and SpectralMLPResidual); Kept is their number of
// elements, 0 before a run.
type Keeper interface{ Kept() int }

// sameType is the type of an op mapping n tensors of one type to a tensor of that type.
func sameType(n int) hm.Type {
	a := hm.TypeVariable('a')
	ts := make(hm.Types, n+1)
	for i := range ts {
		ts[i] = a
	}
	return hm.NewFnType(ts...)
}

// tensorType is the type of a tensor of the given rank whose elements have type a.
func tensorType(dims int, a hm.Type) hm.Type {
	if dims == 0 {
		return a
	}
	return G.TensorType{Dims: dims, Of: a}
}

// dense returns input i of an op as a *tensor.Dense, or an error naming the op and input.
func dense(op string, inputs []G.Value, i int) (*tensor.Dense, error) {
	if i >= len(inputs) {
		return nil, fmt.Errorf("%s: want input %d, got %d inputs", op, i, len(inputs))
	}
	d, ok := inputs[i].(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("%s: input %d is %T, want *tensor.Dense", op, i, inputs[i])
	}
	return d, nil
}

// denseInputs returns an op's first n inputs as *tensor.Dense, or an error naming the op
// and the input that is not.
func denseInputs(op string, inputs []G.Value, n int) ([]*tensor.Dense, error) {
	ts := make([]*tensor.Dense, n)
	for i := range ts {
		var err error
		if ts[i], err = dense(op, inputs, i); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

// runShaped runs an op whose result has its first input's dtype and shape: its n inputs as
// dense tensors, its kept output out (or prealloc when it fits), and the kernel of that
// dtype, k32 or k64, on the output's data.
func runShaped(op string, out *outBuf, n int, prealloc G.Value, in []G.Value,
	k32 func([]float32, []*tensor.Dense) error, k64 func([]float64, []*tensor.Dense) error) (G.Value, error) {
	ts, err := denseInputs(op, in, n)
	if err != nil {
		return nil, err
	}
	res := out.get(prealloc, ts[0].Dtype(), ts[0].Shape(), in)
	switch res.Dtype() {
	case tensor.Float32:
		err = k32(data[float32](res), ts)
	case tensor.Float64:
		err = k64(data[float64](res), ts)
	}
	return res, err
}

// firstShape is the shape of an op's first input, for InferShape.
func firstShape(op string, in []G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("%s: input 0 has shape %v", op, in[0])
	}
	return s.Clone(), nil
}

// outBuf is the output tensor an op keeps between runs. Gorgonia's tape machine forgets
// every register on Reset and offers a preallocated buffer only to ops that call external
// code (and then allocates it anew after each Reset), so an op that made its result in Do
// would allocate it on every step. An op holding an outBuf allocates its result once and
// overwrites it on every later run: the value of a node is valid until the next run of its
// graph. An op, and so its buffer, belongs to one node of one graph; one graph is not run
// by two machines at a time.
type outBuf struct{ t *tensor.Dense }

// get returns the tensor an op writes its result into: prealloc if it fits (a dense tensor
// of dtype dt and the given shape that shares no memory with an input), else the kept
// tensor if it fits, else a new zeroed tensor, which is kept for the next runs.
func (b *outBuf) get(prealloc G.Value, dt tensor.Dtype, shape tensor.Shape, inputs []G.Value) *tensor.Dense {
	if p, ok := prealloc.(*tensor.Dense); ok && fits(p, dt, shape, inputs) {
		return p
	}
	if b.t == nil || !fits(b.t, dt, shape, inputs) {
		b.t = tensor.New(tensor.Of(dt), tensor.WithShape(shape.Clone()...))
	}
	return b.t
}

// fits reports whether p can hold an op's result of dtype dt and the given shape: it is
// natively accessible and shares no memory with any input. The tape machine reuses
// registers, so a buffer it offers may belong to another node's shape or alias an input.
func fits(p *tensor.Dense, dt tensor.Dtype, shape tensor.Shape, inputs []G.Value) bool {
	return p.Dtype() == dt && p.Shape().Eq(shape) && p.IsNativelyAccessible() && !aliases(p, inputs)
}

// aliases reports whether p shares its first byte with any input's memory range.
func aliases(p *tensor.Dense, inputs []G.Value) bool {
	ps, pe := span(p)
	for _, in := range inputs {
		d, ok := in.(*tensor.Dense)
		if !ok {
			continue
		}
		s, e := span(d)
		if ps < e && s < pe {
			return true
		}
	}
	return false
}

// span is the address range [start, end) of a dense tensor's data.
func span(d *tensor.Dense) (uintptr, uintptr) {
	s := d.Uintptr()
	return s, s + d.MemSize()
}

// data returns the backing slice of a dense tensor as []T.
func data[T kernel.Float](d *tensor.Dense) []T {
	return d.Data().([]T)
}

// scalar reads a scalar Value (a *G.F32, *G.F64 or a one-element tensor) as float64.
func scalar(v G.Value) (float64, error) {
	switch s := v.(type) {
	case *G.F64:
		return float64(*s), nil
	case *G.F32:
		return float64(*s), nil
	case *tensor.Dense:
		switch d := s.Data().(type) {
		case float64:
			return d, nil
		case float32:
			return float64(d), nil
		case []float64:
			if len(d) == 1 {
				return d[0], nil
			}
		case []float32:
			if len(d) == 1 {
				return float64(d[0]), nil
			}
		}
	}
	return 0, fmt.Errorf("want a float scalar, got %T", v)
}

// checkFloat returns an error unless dt is Float32 or Float64.
func checkFloat(op string, dt tensor.Dtype) error {
	if dt != tensor.Float32 && dt != tensor.Float64 {
		return fmt.Errorf("%s: dtype %v, want float32 or float64", op, dt)
	}
	return nil
}
