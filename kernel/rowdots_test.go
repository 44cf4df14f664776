package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// rowDotsShapes are the (rows, width) pairs the row kernels are tested on: rows around
// the four-row groups of DotRows, widths around the 8-, 32- and 64-column blocks of
// WeightedRowSum, and widths that are not a multiple of 8 (the portable loops).
func rowDotsShapes() [][2]int {
	var out [][2]int
	for _, m := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 13, 100, 129} {
		for _, d := range []int{4, 8, 12, 16, 24, 32, 40, 64, 72, 96, 104, 128, 136} {
			out = append(out, [2]int{m, d})
		}
	}
	return out
}

// randomRows returns n standard normal values, and in float32.
func randomRows(rng *rand.Rand, n int) ([]float64, []float32) {
	x64, x32 := make([]float64, n), make([]float32, n)
	for i := range x32 {
		x32[i] = float32(rng.NormFloat64())
		x64[i] = float64(x32[i])
	}
	return x64, x32
}

// TestDotRows: float32 results within the rounding bound of a sum of d products,
// (d + 1) 2^-24 times the sum of their magnitudes, of the exact dot products of the same
// inputs; float64 within 1e-12 of them; nothing written past len(s).
func TestDotRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const alpha = 0.375
	for _, sh := range rowDotsShapes() {
		m, d := sh[0], sh[1]
		k64, k32 := randomRows(rng, m*d)
		q64, q32 := randomRows(rng, d)
		s32, s64 := make([]float32, m+1), make([]float64, m+1)
		s32[m], s64[m] = 7, 7
		DotRows(s32[:m], k32, q32, alpha)
		DotRows(s64[:m], k64, q64, alpha)
		if s32[m] != 7 || s64[m] != 7 {
			t.Fatalf("m %d, d %d: DotRows wrote past its rows", m, d)
		}
		for j := range m {
			var want, mag float64
			for i := range d {
				want += k64[j*d+i] * q64[i]
				mag += math.Abs(k64[j*d+i] * q64[i])
			}
			want, mag = alpha*want, alpha*mag
			if e := math.Abs(float64(s32[j]) - want); e > float64(d+1)*0x1p-24*mag {
				t.Fatalf("float32, m %d, d %d, row %d: %v, want %v (error %.3g, bound %.3g)", m, d, j, s32[j], want, e, float64(d+1)*0x1p-24*mag)
			}
			if e := math.Abs(s64[j] - want); e > 1e-12*mag {
				t.Fatalf("float64, m %d, d %d, row %d: %v, want %v", m, d, j, s64[j], want)
			}
		}
	}
}

// TestWeightedRowSum: float32 results within (m + 1) 2^-24 times the sum of the terms'
// magnitudes of the exact sums, float64 within 1e-12 of them, zeros for no rows, and
// nothing written past len(out).
func TestWeightedRowSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, sh := range rowDotsShapes() {
		m, d := sh[0], sh[1]
		v64, v32 := randomRows(rng, m*d)
		p64, p32 := randomRows(rng, m)
		o32, o64 := make([]float32, d+1), make([]float64, d+1)
		for i := range o32 {
			o32[i], o64[i] = 7, 7
		}
		WeightedRowSum(o32[:d], p32, v32)
		WeightedRowSum(o64[:d], p64, v64)
		if o32[d] != 7 || o64[d] != 7 {
			t.Fatalf("m %d, d %d: WeightedRowSum wrote past its columns", m, d)
		}
		for i := range d {
			var want, mag float64
			for j := range m {
				want += p64[j] * v64[j*d+i]
				mag += math.Abs(p64[j] * v64[j*d+i])
			}
			if e := math.Abs(float64(o32[i]) - want); e > float64(m+1)*0x1p-24*mag {
				t.Fatalf("float32, m %d, d %d, column %d: %v, want %v (error %.3g)", m, d, i, o32[i], want, e)
			}
			if e := math.Abs(o64[i] - want); e > 1e-12*mag {
				t.Fatalf("float64, m %d, d %d, column %d: %v, want %v", m, d, i, o64[i], want)
			}
		}
	}
}

// BenchmarkRowDots: the row kernels against this build's Gemv on the same products, one
// query against m = 128 cached rows of width 64 (one head's keys or values of a decoder
// step), in L1:
//
//	go test -run '^$' -bench RowDots ./kernel                  # against gonum's Gemv
//	go test -tags openblas -run '^$' -bench RowDots ./kernel   # against OpenBLAS's
func BenchmarkRowDots(b *testing.B) {
	const m, d = 128, 64
	_, k := randomRows(rand.New(rand.NewPCG(1, 1)), m*d)
	_, q := randomRows(rand.New(rand.NewPCG(2, 2)), d)
	s, out := make([]float32, m), make([]float32, d)
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"dot/DotRows", func() { DotRows(s, k, q, 0.5) }},
		{"dot/Gemv", func() { Gemv(false, m, d, 0.5, k, d, q, 0, s) }},
		{"sum/WeightedRowSum", func() { WeightedRowSum(out, s, k) }},
		{"sum/Gemv", func() { Gemv(true, m, d, 1, k, d, s, 0, out) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(m * d * 4)
			for b.Loop() {
				c.f()
			}
		})
	}
}

// BenchmarkRowDotsMemory: DotRows and WeightedRowSum streaming 256 MB of cached rows from
// memory in chunks of 128 rows of width 64 (one head's keys or values at a decoder step),
// on one goroutine and on GOMAXPROCS goroutines: the bandwidth that bounds a step of many
// sequences whose caches outgrow the processor's (MB/s is over all goroutines):
//
//	go test -run '^$' -bench RowDotsMemory -benchtime 10x ./kernel
func BenchmarkRowDotsMemory(b *testing.B) {
	const d, chunk = 64, 128
	rows := 256 << 20 / 4 / d
	_, k := randomRows(rand.New(rand.NewPCG(1, 1)), rows*d)
	for _, kernel := range []string{"DotRows", "WeightedRowSum"} {
		for _, procs := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", kernel, procs), func(b *testing.B) {
				b.SetBytes(int64(rows * d * 4))
				for b.Loop() {
					var wg sync.WaitGroup
					for w := range procs {
						wg.Go(func() {
							s, q, out := make([]float32, chunk), make([]float32, d), make([]float32, d)
							for c := w * chunk; c+chunk <= rows; c += procs * chunk {
								if kernel == "DotRows" {
									DotRows(s, k[c*d:(c+chunk)*d], q, 1)
								} else {
									WeightedRowSum(out, s, k[c*d:(c+chunk)*d])
								}
							}
						})
					}
					wg.Wait()
				}
			})
		}
	}
}
