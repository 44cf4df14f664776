package search

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"lipformer/layers"
	"lipformer/lipschitz"
)

// LowerBounds are the best measured local Lipschitz constants of a layer on sequences of N
// tokens: lower bounds on its true constants, to set beside its certified ones.
type LowerBounds struct {
	N    int     `json:"n"`
	Inf  float64 `json:"inf"`    // the largest ||J(X)||_inf found
	Tok2 float64 `json:"token2"` // the largest token norm of J(X) found (lipschitz.JacobianNormTok2)
}

// LayerLowerBounds searches the inputs of a float64 attention layer on n tokens: o.Starts
// starts of o.Steps Adam steps maximising ||J||_inf, the same maximising ||J||_2, and the
// token norm of J at the best input of each. o.Norm is ignored and o.Width set to the
// layer's width. done, if not nil, is called after each of the 2 o.Starts starts.
func LayerLowerBounds(a *layers.Attention, n int, o Options, done func()) (LowerBounds, error) {
	m, err := NewGraphMap(a, n, 0)
	if err != nil {
		return LowerBounds{}, err
	}
	defer m.Close()
	lb := LowerBounds{N: n}
	o.Width = m.Len() / n
	j := mat.NewDense(m.Len(), m.Len(), nil)
	for _, p := range []Norm{NormInf, Norm2} {
		o.Norm = p
		r, err := Maximize([]Map{m}, o, done)
		if err != nil {
			return LowerBounds{}, fmt.Errorf("search: %v: %w", p, err)
		}
		if p == NormInf {
			lb.Inf = r.Best
		}
		if err := m.Jacobian(r.X, j); err != nil {
			return LowerBounds{}, err
		}
		tok2, err := lipschitz.JacobianNormTok2(j, n, 30)
		if err != nil {
			return LowerBounds{}, err
		}
		lb.Tok2 = max(lb.Tok2, tok2)
		lb.Inf = max(lb.Inf, lipschitz.JacobianNormInf(j))
	}
	return lb, nil
}
