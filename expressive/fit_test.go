package expressive

import (
	"math"
	"testing"
)

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

func TestFitDErrors(t *testing.T) {
	if _, _, err := FitD([]int{0, 2}, []int{1, 2}); err == nil {
		t.Error("L = 0 gave no error")
	}
}
