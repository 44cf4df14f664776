package stats

import (
	"math"
	"testing"
)

func TestFitLineExact(t *testing.T) {
	x := []float64{1, 2, 4, 7}
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = 3 - 0.5*v
	}
	f, err := FitLine(x, y)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.A-3) > 1e-12 || math.Abs(f.B+0.5) > 1e-12 || math.Abs(f.R2-1) > 1e-12 || f.N != 4 {
		t.Fatalf("fit %+v, want A = 3, B = -0.5, R2 = 1", f)
	}
}

// Points (0,0), (1,2), (2,1): by hand xbar = 1, ybar = 1, Sxx = 2, Sxy = 1, Syy = 2, so
// B = 1/2, A = 1/2, residuals -1/2, 1, -1/2, SS_res = 3/2 and R2 = 1 - 3/4 = 1/4.
func TestFitLineHand(t *testing.T) {
	f, err := FitLine([]float64{0, 1, 2}, []float64{0, 2, 1})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.A-0.5) > 1e-15 || math.Abs(f.B-0.5) > 1e-15 || math.Abs(f.R2-0.25) > 1e-15 {
		t.Fatalf("fit %+v, want A = B = 0.5, R2 = 0.25", f)
	}
}

// Every y equal is fitted exactly: B = 0, A = y, R2 = 1.
func TestFitLineConstantY(t *testing.T) {
	f, err := FitLine([]float64{1, 2, 3}, []float64{5, 5, 5})
	if err != nil {
		t.Fatal(err)
	}
	if f.A != 5 || f.B != 0 || f.R2 != 1 || f.N != 3 {
		t.Fatalf("fit %+v, want A = 5, B = 0, R2 = 1", f)
	}
}

func TestFitErrors(t *testing.T) {
	if _, err := FitLine([]float64{1, 1}, []float64{1, 2}); err == nil {
		t.Error("constant x gave no error")
	}
	if _, err := FitLine([]float64{0.1, 0.1, 0.1}, []float64{1, 2, 3}); err == nil {
		t.Error("three equal x gave no error")
	}
	if _, err := FitLine([]float64{1, 1 + 1e-9}, []float64{1, 2}); err == nil {
		t.Error("x equal to rounding gave no error")
	}
	if _, err := FitLine([]float64{1}, []float64{1}); err == nil {
		t.Error("one point gave no error")
	}
	if _, err := FitLine([]float64{1, 2}, []float64{1}); err == nil {
		t.Error("mismatched lengths gave no error")
	}
	if _, err := FitLine([]float64{1, math.NaN()}, []float64{1, 2}); err == nil {
		t.Error("NaN gave no error")
	}
}
