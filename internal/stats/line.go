package stats

import (
	"fmt"
	"math"
)

// Line is the least-squares line y = A + B x through N points, with its coefficient of
// determination R2 = 1 - SS_res / SS_tot (1 when every y is equal and so fitted exactly).
type Line struct {
	A, B, R2 float64
	N        int
}

// degenerate is the largest sum of squared deviations of x, relative to the sum of
// squares of x, at which the x are taken as all equal: below it the slope is rounding
// error.
const degenerate = 1e-12

// FitLine fits y = A + B x by least squares. It needs finite points, and at least two
// distinct x: the spread sum (x - mean x)^2 must exceed degenerate times sum x^2.
func FitLine(x, y []float64) (Line, error) {
	if len(x) != len(y) {
		return Line{}, fmt.Errorf("stats: fit has %d x but %d y", len(x), len(y))
	}
	n := float64(len(x))
	var mx, my, sq float64
	for i := range x {
		if math.IsNaN(x[i]) || math.IsInf(x[i], 0) || math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return Line{}, fmt.Errorf("stats: fit point %d = (%v, %v) is not finite", i, x[i], y[i])
		}
		mx += x[i]
		my += y[i]
		sq += x[i] * x[i]
	}
	mx /= n
	my /= n
	var sxx, sxy, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if len(x) < 2 || sxx <= degenerate*sq {
		return Line{}, fmt.Errorf("stats: fit needs at least two distinct x, got %d points", len(x))
	}
	f := Line{B: sxy / sxx, N: len(x)}
	f.A = my - f.B*mx
	var ssRes float64
	for i := range x {
		r := y[i] - f.A - f.B*x[i]
		ssRes += r * r
	}
	f.R2 = 1
	if syy > 0 {
		f.R2 = 1 - ssRes/syy
	}
	return f, nil
}
