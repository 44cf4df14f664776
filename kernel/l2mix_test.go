package kernel

import (
	"math"
	"testing"

	"lipformer/internal/gradcheck"
)

// TestL2MixAgainstPlainSums: the M_h of L2Mix equal their defining sums in both
// precisions, and inconsistent sizes are errors.
func TestL2MixAgainstPlainSums(t *testing.T) {
	const rows, cols, heads = 5, 6, 3 // d = 2; rows != cols catches a swap
	d := cols / heads
	wq := gradcheck.Rand(50, 1, rows, cols).Data().([]float64)
	wv := gradcheck.Rand(51, 1, rows, cols).Data().([]float64)
	got, err := L2Mix(wq, wv, rows, cols, heads)
	if err != nil {
		t.Fatal(err)
	}
	got32, err := L2Mix(f32(wq), f32(wv), rows, cols, heads)
	if err != nil {
		t.Fatal(err)
	}
	s := 1 / math.Sqrt(float64(d))
	for h := range heads {
		for a := range d {
			for b := range d {
				var want float64
				for r := range rows {
					want += wq[r*cols+h*d+a] * wv[r*cols+h*d+b]
				}
				want *= s
				i := h*d*d + a*d + b
				if math.Abs(got[i]-want) > 1e-13 || math.Abs(float64(got32[i])-want) > 1e-5 {
					t.Fatalf("M_%d[%d][%d] = %g (float32 %g), want %g", h, a, b, got[i], got32[i], want)
				}
			}
		}
	}
	if _, err := L2Mix(wq, wv, rows, cols, 4); err == nil {
		t.Fatal("6 columns split into 4 heads: want an error")
	}
	if _, err := L2Mix(wq, wv[1:], rows, cols, heads); err == nil {
		t.Fatal("a short wv: want an error")
	}
}
