package flow

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/layers"
)

// SubBlock is one residual sub-block x -> x + g(x) of an invertible model, its branch g
// compiled as a forward-only program for batches of B sequences of T tokens of width D.
type SubBlock struct {
	Name   string // the block's parameter prefix and the branch: h0.attn, h0.mlp, ...
	Norm   Norm   // the norm in which g contracts
	Batch  int    // B
	SeqLen int    // T
	Width  int    // D
	branch func(*layers.Graph, *G.Node) (*G.Node, error)
	lip    func() (float64, bool)
	x      *tensor.Dense // (B*T, D), the program's input
	out    *G.Node       // (B*T, D), g(x)
	vm     G.VM
}

// newSubBlock compiles the branch for batches of the given shape. lip returns g's
// Lipschitz constant in norm and whether it is certified.
func newSubBlock(name string, norm Norm, branch func(*layers.Graph, *G.Node) (*G.Node, error), lip func() (float64, bool), batch, seqLen, width int) (*SubBlock, error) {
	g, err := layers.NewGraph(tensor.Float64, batch, seqLen, false)
	if err != nil {
		return nil, err
	}
	s := &SubBlock{Name: name, Norm: norm, Batch: batch, SeqLen: seqLen, Width: width, branch: branch, lip: lip,
		x: tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(batch*seqLen, width))}
	xn := G.NodeFromAny(g.G, s.x, G.WithName("x"))
	if s.out, err = branch(g, xn); err != nil {
		return nil, fmt.Errorf("flow: %s: %w", name, err)
	}
	prog, locs, err := G.CompileFunction(g.G, g.G.Inputs(), G.Nodes{s.out})
	if err != nil {
		return nil, fmt.Errorf("flow: %s: compile: %w", name, err)
	}
	s.vm = G.NewTapeMachine(g.G, G.WithPrecompiled(prog, locs))
	return s, nil
}

// Lipschitz is g's Lipschitz constant in Norm from the current weights and power-iteration
// vectors, and whether it is a certified bound (false for the dp control's naive constant).
func (s *SubBlock) Lipschitz() (float64, bool) { return s.lip() }

// Branch returns g(x) for a batch x (B*T*D values, row-major (B*T, D)).
func (s *SubBlock) Branch(x []float64) ([]float64, error) {
	if n := s.Batch * s.SeqLen * s.Width; len(x) != n {
		return nil, fmt.Errorf("flow: %s: input of %d values, want B*T*D = %d*%d*%d = %d", s.Name, len(x), s.Batch, s.SeqLen, s.Width, n)
	}
	copy(s.x.Data().([]float64), x)
	defer s.vm.Reset()
	if err := s.vm.RunAll(); err != nil {
		return nil, fmt.Errorf("flow: %s: %w", s.Name, err)
	}
	return append([]float64(nil), s.out.Value().Data().([]float64)...), nil
}

// Forward returns x + g(x).
func (s *SubBlock) Forward(x []float64) ([]float64, error) {
	y, err := s.Branch(x)
	if err != nil {
		return nil, err
	}
	for i, v := range x {
		y[i] += v
	}
	return y, nil
}

// Close releases the program.
func (s *SubBlock) Close() error { return s.vm.Close() }
