package expressive

import (
	"fmt"
	"hash"
	"hash/fnv"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// opBase carries the boilerplate of the package's Gorgonia ops (pairsoftplus.go): no
// external calls, no input overwritten, hashes derived from the op's name. Gorgonia
// merges nodes with equal hashes and children, so the name must identify the operation.
type opBase struct{ name string }

// ReturnsPtr is false: the op returns a new value.
func (op opBase) ReturnsPtr() bool { return false }

// CallsExtern is false: the op runs in Go on the CPU.
func (op opBase) CallsExtern() bool { return false }

// OverwritesInput is -1: no input is overwritten.
func (op opBase) OverwritesInput() int { return -1 }

// WriteHash writes the op's name to h.
func (op opBase) WriteHash(h hash.Hash) { fmt.Fprint(h, op.name) }

// Hashcode is the FNV hash of the op's name.
func (op opBase) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

// String is the op's name.
func (op opBase) String() string { return op.name }

// outputLike returns prealloc if it is a float64 tensor of the given shape sharing no
// memory with any input (the tape machine reuses registers), and a new tensor otherwise.
func outputLike(prealloc G.Value, shape tensor.Shape, in []G.Value) *tensor.Dense {
	p, ok := prealloc.(*tensor.Dense)
	if !ok || p.Dtype() != tensor.Float64 || !p.Shape().Eq(shape) || !p.IsNativelyAccessible() {
		return tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(shape.Clone()...))
	}
	ps, pe := p.Uintptr(), p.Uintptr()+p.MemSize()
	for _, v := range in {
		if d, ok := v.(*tensor.Dense); ok && ps < d.Uintptr()+d.MemSize() && d.Uintptr() < pe {
			return tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(shape.Clone()...))
		}
	}
	return p
}
