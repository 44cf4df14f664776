package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSoftmaxRowFloat32: the float32 row softmax (vector maximum, exponential and sum on
// the prefix of whole vectors) within its rounding bound of the float64 softmax of the
// same inputs, with the maximum at every position, for lengths and kept prefixes around
// the vector blocks, offsets far from 0, -Inf logits (exact zeros), and zeros past keep.
func TestSoftmaxRowFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, n := range []int{1, 5, 8, 9, 15, 16, 17, 31, 40, 100, 129} {
		for _, keep := range []int{1, n / 2, n - 1, n} {
			if keep < 1 {
				continue
			}
			for top := range keep {
				for _, off := range []float64{0, -1e4, 3e3, math.Inf(-1)} {
					x32, y32 := make([]float32, n), make([]float32, n)
					for j := range x32 {
						x32[j] = float32(3 * rng.NormFloat64())
						if !math.IsInf(off, -1) {
							x32[j] += float32(off)
						} else if j%3 == 1 {
							x32[j] = float32(off) // masked
						}
						y32[j] = 7
					}
					x32[top] = 12 // above every other with overwhelming odds
					if !math.IsInf(off, -1) {
						x32[top] += float32(off)
					}
					SoftmaxRow(y32, x32, keep)
					m := float64(x32[0])
					for _, v := range x32[:keep] {
						m = math.Max(m, float64(v))
					}
					var z float64
					for _, v := range x32[:keep] {
						z += math.Exp(float64(v) - m)
					}
					for j, got := range y32 {
						want := 0.0
						if j < keep {
							want = math.Exp(float64(x32[j])-m) / z
						}
						if want == 0 && got != 0 {
							t.Fatalf("n %d, keep %d, max at %d, offset %g: y[%d] = %v for x %v, want 0", n, keep, top, off, j, got, x32[j])
						}
						if e := math.Abs(float64(got) - want); e > (math.Abs(float64(x32[j])-m)+4)*0x1p-23*want {
							t.Fatalf("n %d, keep %d, max at %d, offset %g: y[%d] = %v, want %v", n, keep, top, off, j, got, want)
						}
					}
				}
			}
		}
	}
}
