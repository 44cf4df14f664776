package expressive

import (
	"fmt"
	"math"
)

// LinearFit is the least-squares line y = A + B x through N points, with its coefficient
// of determination R2 = 1 - SS_res / SS_tot (1 when every y is equal and so fitted exactly).
type LinearFit struct {
	A, B, R2 float64
	N        int
}

// FitLine fits y = A + B x by least squares. It needs at least two distinct x.
func FitLine(x, y []float64) (LinearFit, error) {
	if len(x) != len(y) {
		return LinearFit{}, fmt.Errorf("expressive: fit has %d x but %d y", len(x), len(y))
	}
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		if math.IsNaN(x[i]) || math.IsInf(x[i], 0) || math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return LinearFit{}, fmt.Errorf("expressive: fit point %d = (%v, %v) is not finite", i, x[i], y[i])
		}
		mx += x[i]
		my += y[i]
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
	if len(x) < 2 || sxx == 0 {
		return LinearFit{}, fmt.Errorf("expressive: fit needs at least two distinct x, got %d points", len(x))
	}
	f := LinearFit{B: sxy / sxx, N: len(x)}
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

// FitD fits the smallest widths d found at lengths L both against log L (natural log)
// and against L.
func FitD(L, d []int) (vsLogL, vsL LinearFit, err error) {
	if len(L) != len(d) {
		return LinearFit{}, LinearFit{}, fmt.Errorf("expressive: %d lengths but %d widths", len(L), len(d))
	}
	logL, lin, dy := make([]float64, len(L)), make([]float64, len(L)), make([]float64, len(L))
	for i := range L {
		if L[i] < 1 {
			return LinearFit{}, LinearFit{}, fmt.Errorf("expressive: length L = %d in a fit, want >= 1", L[i])
		}
		logL[i], lin[i], dy[i] = math.Log(float64(L[i])), float64(L[i]), float64(d[i])
	}
	if vsLogL, err = FitLine(logL, dy); err != nil {
		return LinearFit{}, LinearFit{}, err
	}
	vsL, err = FitLine(lin, dy)
	return vsLogL, vsL, err
}
