package search

import "math"

// Adam's constants (Kingma and Ba 2015).
const (
	adamBeta1 = 0.9
	adamBeta2 = 0.999
	adamEps   = 1e-8
)

// adam is Adam gradient ascent on a vector, with an optional projection on
// the box [-radius, radius]^K.
type adam struct {
	m, v   []float64 // moment estimates
	t      int       // steps taken
	radius float64   // 0: no box
}

func newAdam(k int, radius float64) *adam {
	return &adam{m: make([]float64, k), v: make([]float64, k), radius: radius}
}

// step moves x up the gradient grad with step size lr, then projects it on
// the box.
func (a *adam) step(x, grad []float64, lr float64) {
	a.t++
	c1 := 1 - math.Pow(adamBeta1, float64(a.t))
	c2 := 1 - math.Pow(adamBeta2, float64(a.t))
	for k, g := range grad {
		a.m[k] = adamBeta1*a.m[k] + (1-adamBeta1)*g
		a.v[k] = adamBeta2*a.v[k] + (1-adamBeta2)*g*g
		x[k] += lr * (a.m[k] / c1) / (math.Sqrt(a.v[k]/c2) + adamEps)
	}
	project(x, a.radius)
}

// project clips every entry of x into [-radius, radius]; radius 0 means no box.
func project(x []float64, radius float64) {
	if radius == 0 {
		return
	}
	for k := range x {
		x[k] = math.Max(-radius, math.Min(radius, x[k]))
	}
}
