package layers

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/ops"
)

// BallNorm is the certified substitute for LayerNorm (docs/math.md, "The ball norm"): it
// centres each row and projects it onto the ball of radius sqrt(D) e^s, with s learned.
// Rows beyond the radius land on its sphere, as LayerNorm puts every row on a sphere; rows
// inside pass centred. At every s it is 1-Lipschitz in each row's 2-norm, so a contractive
// branch in the token norm stays contractive behind it.
type BallNorm struct {
	LogRadius *Param // (1) s, not decayed, trained at scalarLR times the learning rate
	Width     int    // D
}

// NewBallNorm makes a ball norm of width d whose radius starts at rho sqrt(d), rho > 0.
func NewBallNorm(name string, d int, rho float64, dt tensor.Dtype) (*BallNorm, error) {
	if !(rho > 0) || math.IsInf(rho, 1) {
		return nil, fmt.Errorf("%s: initial ball radius %g (in units of sqrt(D)), want finite and > 0", name, rho)
	}
	b := &BallNorm{LogRadius: newParam(name+".logradius", dt, false, 1), Width: d}
	b.LogRadius.fill(math.Log(rho))
	b.LogRadius.LRScale = scalarLR
	return b, nil
}

// Forward maps x (N, D) to (N, D).
func (b *BallNorm) Forward(g *Graph, x *G.Node) (*G.Node, error) {
	return ops.BallNorm(x, g.Node(b.LogRadius))
}

// Radius is the current radius sqrt(D) e^s.
func (b *BallNorm) Radius() float64 {
	return ops.BallRadius(b.Width, b.LogRadius.Float64s()[0])
}

// Lipschitz2 is 1: the constant in each row's 2-norm, hence in the 2-norm of the sequence
// and in the token norm.
func (b *BallNorm) Lipschitz2() float64 { return 1 }

// LipschitzInf is sqrt(D), a bound in the inf-norm of the sequence: ||B(x) - B(y)||_inf <=
// ||B(x) - B(y)||_2 <= ||x - y||_2 <= sqrt(D) ||x - y||_inf row by row.
func (b *BallNorm) LipschitzInf() float64 { return math.Sqrt(float64(b.Width)) }

// Params returns the log radius.
func (b *BallNorm) Params() []*Param { return []*Param{b.LogRadius} }
