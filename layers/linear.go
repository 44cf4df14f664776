package layers

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/lipschitz"
	"lipformer/ops"
)

// Linear is y = x W + b, with W (In, Out) and an optional bias b (Out).
type Linear struct {
	W *Param // (In, Out)
	B *Param // (Out), or nil
}

// NewLinear makes a Linear with weights drawn from N(0, std^2) and a zero bias.
func NewLinear(name string, in, out int, bias bool, std float64, dt tensor.Dtype, rng *rand.Rand) *Linear {
	l := &Linear{W: newParam(name+".w", dt, true, in, out)}
	l.W.fillNormal(rng, std)
	if bias {
		l.B = newParam(name+".b", dt, false, out)
	}
	return l
}

// Forward maps x (N, In) to (N, Out).
func (l *Linear) Forward(g *Graph, x *G.Node) (*G.Node, error) { return l.apply(g, x, g.Node(l.W)) }

// apply maps x (N, In) to x w + b, w (In, Out) being l.W or a node computed from it.
func (l *Linear) apply(g *Graph, x, w *G.Node) (*G.Node, error) {
	if x.Dims() != 2 || x.Shape()[1] != w.Shape()[0] {
		return nil, fmt.Errorf("%s: input %v, want (N, %d)", l.W.Name, x.Shape(), w.Shape()[0])
	}
	var b *G.Node // (Out), or nil
	if l.B != nil {
		b = g.Node(l.B)
	}
	return ops.Linear(x, b, w)
}

// LipschitzInf is ||W^T||_inf, the exact inf-norm Lipschitz constant of the map x -> xW + b
// on one row.
func (l *Linear) LipschitzInf() float64 { return lipschitz.LinearLipInf(denseOf(l.W)) }

// Lipschitz2 is ||W||_2, the exact 2-norm Lipschitz constant (largest singular value).
func (l *Linear) Lipschitz2() float64 { return lipschitz.Norm2(denseOf(l.W)) }

// denseOf copies a matrix parameter into a gonum matrix.
func denseOf(p *Param) *mat.Dense {
	s := p.Value.Shape()
	return mat.NewDense(s[0], s[1], p.Float64s())
}

// Params returns W and, when present, B: the order Forward uses them.
func (l *Linear) Params() []*Param { return nonNil(l.W, l.B) }
