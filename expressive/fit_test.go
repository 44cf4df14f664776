package expressive

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

func TestFitD(t *testing.T) {
	L := []int{16, 64, 256, 1024}
	d := make([]int, len(L))
	for i, l := range L {
		d[i] = 10 + 20*int(math.Round(math.Log2(float64(l))))
	}
	logFit, linFit, err := FitD(L, d)
	if err != nil {
		t.Fatal(err)
	}
	// d = 10 + 20 log2 L = 10 + (20 / ln 2) ln L exactly.
	if math.Abs(logFit.A-10) > 1e-9 || math.Abs(logFit.B-20/math.Ln2) > 1e-9 || math.Abs(logFit.R2-1) > 1e-12 {
		t.Fatalf("log fit %+v", logFit)
	}
	if !(linFit.R2 < logFit.R2) {
		t.Fatalf("linear fit R2 %v should be below the exact log fit's", linFit.R2)
	}
}

func TestFitErrors(t *testing.T) {
	if _, err := FitLine([]float64{1, 1}, []float64{1, 2}); err == nil {
		t.Error("constant x gave no error")
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
	if _, _, err := FitD([]int{0, 2}, []int{1, 2}); err == nil {
		t.Error("L = 0 gave no error")
	}
}
