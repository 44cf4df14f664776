package layers

import (
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Buffer is a tensor that a layer keeps between steps and feeds into its graphs but does
// not learn: the optimizer never sees it, checkpoints save it. Like a Param's, its Value is
// bound into every graph, so an update in place is seen by all of them.
type Buffer struct {
	Name  string
	Value *tensor.Dense
}

// newBuffer allocates a zero buffer of the given shape and dtype.
func newBuffer(name string, dt tensor.Dtype, shape ...int) *Buffer {
	return &Buffer{Name: name, Value: tensor.New(tensor.Of(dt), tensor.WithShape(shape...))}
}

// BufferNode returns the input node of b in this graph, creating it (bound to b.Value) on
// first use. Unlike Node it does not add b to the graph's parameters: no gradient is taken.
func (g *Graph) BufferNode(b *Buffer) *G.Node {
	if n, ok := g.bufs[b]; ok {
		return n
	}
	if g.bufs == nil {
		g.bufs = map[*Buffer]*G.Node{}
	}
	n := G.NodeFromAny(g.G, b.Value, G.WithName(b.Name))
	g.bufs[b] = n
	return n
}

// Float64s returns a copy of the buffer's values as float64.
func (b *Buffer) Float64s() []float64 { return float64sOf(b.Value) }

// setFloat64s writes v (one value per element) into the buffer, allocating nothing.
func (b *Buffer) setFloat64s(v []float64) {
	switch b.Value.Dtype() {
	case tensor.Float32:
		d := b.Value.Float32s()
		for i, x := range v {
			d[i] = float32(x)
		}
	case tensor.Float64:
		copy(b.Value.Float64s(), v)
	}
}
