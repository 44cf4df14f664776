package lipschitz

import (
	"math"
	"testing"
)

func TestJacobianAnalytic(t *testing.T) {
	f := func(x []float64) []float64 {
		return []float64{x[0] * x[1], math.Sin(x[2]), x[0] * x[0], math.Exp(x[1])}
	}
	x := []float64{0.7, -1.2, 2.1}
	j := mustJacobian(t, f, x, 1e-5)
	want := [][]float64{
		{x[1], x[0], 0},
		{0, 0, math.Cos(x[2])},
		{2 * x[0], 0, 0},
		{0, math.Exp(x[1]), 0},
	}
	for i := range want {
		for k := range want[i] {
			if d := math.Abs(j.At(i, k) - want[i][k]); d > 1e-9 {
				t.Errorf("J[%d][%d] = %.12g, want %.12g", i, k, j.At(i, k), want[i][k])
			}
		}
	}
	if x[0] != 0.7 || x[1] != -1.2 || x[2] != 2.1 {
		t.Errorf("Jacobian modified x: %v", x)
	}
	// Row sums 1.9, |cos 2.1|, 1.4, e^-1.2: the largest is 1.9.
	if got := JacobianNormInf(j); math.Abs(got-1.9) > 1e-9 {
		t.Errorf("JacobianNormInf = %v, want 1.9", got)
	}
}

func TestJacobianErrors(t *testing.T) {
	id := func(x []float64) []float64 { return x }
	if _, err := Jacobian(id, nil, 1e-5); err == nil {
		t.Error("empty x: want error")
	}
	for _, h := range []float64{0, -1e-5, math.NaN(), math.Inf(1)} {
		if _, err := Jacobian(id, []float64{1}, h); err == nil {
			t.Errorf("h = %v: want error", h)
		}
	}
	if _, err := Jacobian(func([]float64) []float64 { return nil }, []float64{1}, 1e-5); err == nil {
		t.Error("empty output: want error")
	}
	calls := 0
	growing := func(x []float64) []float64 { calls++; return make([]float64, calls) }
	if _, err := Jacobian(growing, []float64{1, 2}, 1e-5); err == nil {
		t.Error("output length changing between calls: want error")
	}
}
