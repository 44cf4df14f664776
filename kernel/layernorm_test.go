package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRowStatsFloat32: the mean and 1/sqrt(var + eps) of float32 rows of every length up
// to 70 and at odd offsets (the vector kernels take whole blocks of 8, a loop the rest)
// equal a float64 two-pass computation to 1e-12 relative, and the float64 path too.
func TestRowStatsFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]float32, 400)
	for i := range data {
		data[i] = float32(3 + 2*rng.NormFloat64())
	}
	for _, n := range append(seq(1, 70), 128, 256, 333) {
		for _, off := range []int{0, 1, 5} {
			row := data[off : off+n]
			var want, variance float64
			for _, v := range row {
				want += float64(v)
			}
			want /= float64(n)
			for _, v := range row {
				variance += (float64(v) - want) * (float64(v) - want)
			}
			wantR := 1 / math.Sqrt(variance/float64(n)+1e-5)
			row64 := make([]float64, n)
			for i, v := range row {
				row64[i] = float64(v)
			}
			for name, got := range map[string][2]float64{"float32": pair(rowStats(row, 1e-5)), "float64": pair(rowStats(row64, 1e-5))} {
				if math.Abs(got[0]-want) > 1e-12*math.Abs(want) || math.Abs(got[1]-wantR) > 1e-12*wantR {
					t.Fatalf("%s row of %d at %d: mean %v rstd %v, want %v %v", name, n, off, got[0], got[1], want, wantR)
				}
			}
		}
	}
}

// seq is lo, lo+1, ..., hi.
func seq(lo, hi int) []int {
	var s []int
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}

// pair packs two results into an array.
func pair(a, b float64) [2]float64 { return [2]float64{a, b} }
