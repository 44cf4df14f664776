package expressive

import "math"

// adam is the Adam optimiser (Kingma and Ba 2015) over a flat parameter vector, with the
// usual bias-corrected first and second moment estimates.
type adam struct {
	lr, beta1, beta2, eps float64
	m, v                  []float64
	t                     int
}

// newAdam returns an Adam optimiser for n parameters with learning rate lr and the
// standard beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8.
func newAdam(n int, lr float64) *adam {
	return &adam{lr: lr, beta1: 0.9, beta2: 0.999, eps: 1e-8, m: make([]float64, n), v: make([]float64, n)}
}

// step moves params against grad, in place.
func (a *adam) step(params, grad []float64) {
	a.t++
	c1 := 1 - math.Pow(a.beta1, float64(a.t))
	c2 := 1 - math.Pow(a.beta2, float64(a.t))
	for i, g := range grad {
		a.m[i] = a.beta1*a.m[i] + (1-a.beta1)*g
		a.v[i] = a.beta2*a.v[i] + (1-a.beta2)*g*g
		params[i] -= a.lr * (a.m[i] / c1) / (math.Sqrt(a.v[i]/c2) + a.eps)
	}
}
