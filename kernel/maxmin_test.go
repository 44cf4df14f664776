package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMaxMinSortsPairs: MaxMin puts each pair's larger entry first, and MaxMinGrad is the
// transpose of its Jacobian, by central differences away from ties, with dx sharing dy's
// memory as the fused MLP's backward uses it.
func TestMaxMinSortsPairs(t *testing.T) {
	x := []float64{3, 1, -2, 5, 0.5, 0.5, -1, -4}
	y := make([]float64, len(x))
	MaxMin(y, x)
	want := []float64{3, 1, 5, -2, 0.5, 0.5, -1, -4}
	for i := range y {
		if y[i] != want[i] {
			t.Fatalf("MaxMin(%v) = %v, want %v", x, y, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	n := 64
	xs, dy := make([]float64, n), make([]float64, n)
	for i := range xs {
		xs[i], dy[i] = r.NormFloat64(), r.NormFloat64()
	}
	dx := append([]float64(nil), dy...)
	MaxMinGrad(dx, xs, dx)
	const h = 1e-6
	yp, ym := make([]float64, n), make([]float64, n)
	for j := range xs {
		xp, xm := append([]float64(nil), xs...), append([]float64(nil), xs...)
		xp[j] += h
		xm[j] -= h
		MaxMin(yp, xp)
		MaxMin(ym, xm)
		fd := 0.0
		for i := range yp {
			fd += dy[i] * (yp[i] - ym[i]) / (2 * h)
		}
		if math.Abs(fd-dx[j]) > 1e-8 {
			t.Fatalf("d/dx_%d: MaxMinGrad %v, central differences %v", j, dx[j], fd)
		}
	}
}

// TestMaxMinIsOneLipschitz: ||MaxMin(x) - MaxMin(y)||_2 <= ||x - y||_2 and the same in the
// inf-norm, at random pairs of inputs, and equality for inputs whose pairs keep their order.
func TestMaxMinIsOneLipschitz(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n := 16
	x, y, fx, fy := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for range 1000 {
		for i := range x {
			x[i], y[i] = r.NormFloat64(), r.NormFloat64()
		}
		MaxMin(fx, x)
		MaxMin(fy, y)
		var in2, out2, inInf, outInf float64
		for i := range x {
			in2 += (x[i] - y[i]) * (x[i] - y[i])
			out2 += (fx[i] - fy[i]) * (fx[i] - fy[i])
			inInf, outInf = math.Max(inInf, math.Abs(x[i]-y[i])), math.Max(outInf, math.Abs(fx[i]-fy[i]))
		}
		if out2 > in2*(1+1e-12) || outInf > inInf*(1+1e-12) {
			t.Fatalf("|f(x) - f(y)|^2 %v above |x - y|^2 %v (inf-norm %v, %v)", out2, in2, outInf, inInf)
		}
	}
	for i := 0; i < n; i += 2 {
		x[i], x[i+1] = 1, 0
		y[i], y[i+1] = 2, 0.5
	}
	MaxMin(fx, x)
	MaxMin(fy, y)
	if fx[0]-fy[0] != x[0]-y[0] || fx[1]-fy[1] != x[1]-y[1] {
		t.Fatalf("ordered pairs: MaxMin is the identity there, got %v, %v", fx[:2], fy[:2])
	}
}
