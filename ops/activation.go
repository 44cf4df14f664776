package ops

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"lipformer/kernel"
)

// Activation is the 1-Lipschitz activation of an invertible block's MLP branch
// (docs/math.md, "MaxMin").
type Activation int

const (
	// ActELU is the exponential linear unit, elementwise.
	ActELU Activation = iota
	// ActMaxMin sorts each pair of adjacent hidden units, the larger first: 1-Lipschitz in
	// the 2-norm and the inf-norm, with a Jacobian that is a permutation wherever it exists.
	ActMaxMin
)

// String is the activation's name as configs write it: elu or maxmin.
func (a Activation) String() string {
	switch a {
	case ActELU:
		return "elu"
	case ActMaxMin:
		return "maxmin"
	}
	return fmt.Sprintf("Activation(%d)", int(a))
}

// ParseActivation reads elu, maxmin, or "" (elu).
func ParseActivation(s string) (Activation, error) {
	switch s {
	case "", "elu":
		return ActELU, nil
	case "maxmin":
		return ActMaxMin, nil
	}
	return 0, fmt.Errorf("activation %q, want elu or maxmin", s)
}

// activate writes y = act(x) for rows of an even width (MaxMin pairs entries 2i, 2i+1), on
// the calling goroutine: the fused sub-blocks call it once per band of rows. For ELU y may
// be x.
func activate[T kernel.Float](act Activation, y, x []T) {
	if act == ActMaxMin {
		kernel.MaxMin(y, x)
		return
	}
	kernel.ELUSerial(y, x)
}

// activateGrad writes dx = dy J of act at x, on the calling goroutine, for y = act(x):
// MaxMin's from x, ELU's from y (the ops' backward reads each so, ELU and MaxMin); dx may
// be dy.
func activateGrad[T kernel.Float](act Activation, dx, x, y, dy []T) {
	if act == ActMaxMin {
		kernel.MaxMinGrad(dx, x, dy)
		return
	}
	kernel.ELUGradSerial(dx, y, dy)
}

// keepsInput reports whether act's derivative needs its input (MaxMin's), which a fused
// sub-block must then keep beside its output; ELU's is read from the output.
func (a Activation) keepsInput() bool { return a == ActMaxMin }

// MaxMin adds y = MaxMin(x) to x's graph: each pair of adjacent entries of a row sorted,
// the larger first. x's last dimension must be even.
func MaxMin(x *G.Node) (*G.Node, error) {
	if s := x.Shape(); s.Dims() == 0 || s[s.Dims()-1]%2 != 0 {
		return nil, fmt.Errorf("MaxMin: input of shape %v, want a last dimension of even size", s)
	}
	return pointwise{"MaxMin", kernel.MaxMin[float32], kernel.MaxMin[float64], kernel.MaxMinGrad[float32], kernel.MaxMinGrad[float64], false}.apply(x)
}

// Apply adds act(x) to x's graph.
func (a Activation) Apply(x *G.Node) (*G.Node, error) {
	if a == ActMaxMin {
		return MaxMin(x)
	}
	return ELU(x)
}
