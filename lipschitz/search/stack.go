package search

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/layers"
)

// stack is one compiled graph of an attention layer on a batch of B sequences
// of N tokens of width D. Its input x (B*N, D) holds the sequences one after
// the other; one run gives every output F(x_b) and, when it has a gradient,
// the gradient of sum(F(x) * w) with respect to x for the output weights w
// (B*N, D): its block b is w_b^T J(x_b), one vector-Jacobian product per
// sequence in a single backward pass.
type stack struct {
	batch int
	x, w  *tensor.Dense // inputs, written in place before each run
	y, g  G.Value       // outputs and gradient of the last run
	m     G.VM
}

// newStack builds the graph of a on a batch of batch sequences of n tokens,
// with the gradient when grad is true.
func newStack(a *layers.Attention, n, dim, batch int, grad bool) (*stack, error) {
	lg, err := layers.NewGraph(tensor.Float64, batch, n, false)
	if err != nil {
		return nil, err
	}
	s := &stack{batch: batch,
		x: tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(batch*n, dim)),
		w: tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(batch*n, dim))}
	x := G.NodeFromAny(lg.G, s.x, G.WithName("x"))
	y, err := a.Forward(lg, x)
	if err != nil {
		return nil, fmt.Errorf("search: building the layer's graph: %w", err)
	}
	G.Read(y, &s.y)
	if grad {
		w := G.NodeFromAny(lg.G, s.w, G.WithName("w"))
		prod, err := G.HadamardProd(y, w)
		if err != nil {
			return nil, err
		}
		loss, err := G.Sum(prod)
		if err != nil {
			return nil, err
		}
		grads, err := G.Grad(loss, x)
		if err != nil {
			return nil, fmt.Errorf("search: gradient of the layer's graph: %w", err)
		}
		G.Read(grads[0], &s.g)
	}
	s.m = G.NewTapeMachine(lg.G)
	return s, nil
}

// run executes the graph on the current contents of x and w.
func (s *stack) run() error {
	s.m.Reset()
	if err := s.m.RunAll(); err != nil {
		return fmt.Errorf("search: running the layer's graph: %w", err)
	}
	return nil
}

// xs and ws return the backing arrays of the inputs; outputs and grads those
// of the results of the last run.
func (s *stack) xs() []float64      { return s.x.Data().([]float64) }
func (s *stack) ws() []float64      { return s.w.Data().([]float64) }
func (s *stack) outputs() []float64 { return s.y.Data().([]float64) }
func (s *stack) grads() []float64   { return s.g.Data().([]float64) }

// close releases the machine.
func (s *stack) close() { s.m.Close() }
