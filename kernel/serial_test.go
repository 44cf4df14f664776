package kernel

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestAddSerialMatchesLoop: the vector sum equals the scalar loop bit for bit at every
// length around the vectors' and the unrolled loop's boundaries, in place and not, and at
// offsets that leave the slices unaligned.
func TestAddSerialMatchesLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 40, 63, 64, 65, 1000, 1027} {
		for _, off := range []int{0, 1, 3} {
			a, b := make([]float32, n+off), make([]float32, n+off)
			for i := range a {
				a[i], b[i] = float32(rng.NormFloat64()*math.Exp(4*rng.NormFloat64())), float32(rng.NormFloat64())
			}
			a, b = a[off:], b[off:]
			want := make([]float32, n)
			for i := range want {
				want[i] = a[i] + b[i]
			}
			got := make([]float32, n)
			AddSerial(got, a, b)
			AddSerial(b, a, b) // y is b
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.Float32bits(b[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n %d offset %d: element %d is %v (in place %v), want %v", n, off, i, got[i], b[i], want[i])
				}
			}
		}
	}
}

// TestScalingsMatchLoops: Scale, ScaleWide, ScaleDiffWide and SubScaled equal their
// scalar loops bit for bit at lengths around the vectors' boundary, in place and not, at
// unaligned offsets, with factors whose products round (ScaleWide's once, from float64),
// overflow and underflow.
func TestScalingsMatchLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 1))
	for _, n := range []int{0, 1, 7, 8, 9, 16, 31, 33, 1027} {
		for _, off := range []int{0, 1, 3} {
			for _, f := range []float64{0.7310585786300049, -3.3e-7, 1.9e30, 1e-39} {
				x := make([]float32, n+off)
				for i := range x {
					x[i] = float32(rng.NormFloat64() * math.Exp(8*rng.NormFloat64()))
				}
				x = x[off:]
				got, gotWide := make([]float32, n), make([]float32, n)
				sub := make([]float32, n)
				for i := range sub {
					sub[i] = float32(rng.NormFloat64())
				}
				wantSub := append([]float32(nil), sub...)
				for i, v := range x {
					wantSub[i] -= float32(f) * v
				}
				SubScaled(sub, x, float32(f))
				for i := range sub {
					if math.Float32bits(sub[i]) != math.Float32bits(wantSub[i]) {
						t.Fatalf("SubScaled n %d offset %d factor %g: element %d is %v, want %v", n, off, f, i, sub[i], wantSub[i])
					}
				}
				diff, g := make([]float32, n), make([]float32, n)
				for i := range g {
					g[i] = float32(rng.NormFloat64())
				}
				const s = float32(0.3)
				ScaleDiffWide(diff, g, x, f, s)
				inPlace := append([]float32(nil), g...)
				ScaleDiffWide(inPlace, inPlace, x, f, s) // y is g
				for i, v := range x {
					want := s * (g[i] - float32(float64(v)*f))
					if math.Float32bits(diff[i]) != math.Float32bits(want) || math.Float32bits(inPlace[i]) != math.Float32bits(want) {
						t.Fatalf("ScaleDiffWide n %d offset %d factor %g: element %d is %v (in place %v), want %v", n, off, f, i, diff[i], inPlace[i], want)
					}
				}
				Scale(got, x, float32(f))
				ScaleWide(gotWide, x, f)
				in := append([]float32(nil), x...)
				ScaleWide(in, in, f) // y is x
				for i, v := range x {
					want, wantWide := float32(f)*v, float32(float64(v)*f)
					if math.Float32bits(got[i]) != math.Float32bits(want) {
						t.Fatalf("Scale n %d offset %d factor %g: element %d is %v, want %v", n, off, f, i, got[i], want)
					}
					if math.Float32bits(gotWide[i]) != math.Float32bits(wantWide) || math.Float32bits(in[i]) != math.Float32bits(wantWide) {
						t.Fatalf("ScaleWide n %d offset %d factor %g: element %d is %v (in place %v), want %v", n, off, f, i, gotWide[i], in[i], wantWide)
					}
				}
			}
		}
	}
}

// TestBilinear: Bilinear is u^T W v within the rounding of its sums, (cols + rows) 2^-52
// times the sum of the terms' magnitudes, in float32 and float64, on row counts around its
// blocks of 64 rows and column counts that the assembly takes (multiples of 4) and that it
// leaves to Go, of a strided W.
func TestBilinear(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	for _, rows := range []int{1, 7, 64, 65, 130} {
		for _, n := range []int{9, 12, 64} {
			cols := n + 3
			w, u, v := make([]float64, rows*cols), make([]float64, rows), make([]float64, n)
			for _, x := range [][]float64{w, u, v} {
				for i := range x {
					x[i] = float64(float32(rng.NormFloat64()))
				}
			}
			var want, mag float64
			for i := range rows {
				for j := range n {
					want += u[i] * w[i*cols+j] * v[j]
					mag += math.Abs(u[i] * w[i*cols+j] * v[j])
				}
			}
			tol := float64(n+rows) * 0x1p-52 * mag
			if got := Bilinear(w, u, v, cols); math.Abs(got-want) > tol {
				t.Fatalf("float64, %d x %d: %.17g, want %.17g", rows, n, got, want)
			}
			if got := Bilinear(f32(w), f32(u), f32(v), cols); math.Abs(got-want) > tol {
				t.Fatalf("float32, %d x %d: %.17g, want %.17g", rows, n, got, want)
			}
		}
	}
}

// TestPairDotsAndMatVec64MatchLoops: PairDots (in float32) and matVec64 (a float32 matrix
// with a float64 vector) equal, bit for bit, the sums taken one row after another, on 11
// rows (not a multiple of their four) of strided matrices.
func TestPairDotsAndMatVec64MatchLoops(t *testing.T) {
	const rows, ld, n = 11, 13, 9
	a, b, x := make([]float32, rows*ld), make([]float32, rows*ld), make([]float64, n)
	for i := range a {
		a[i], b[i] = float32(i%7)*0.37-1.1+float32(i)*1e-3, float32(i%5)*0.61-0.9
	}
	for j := range x {
		x[j] = 0.1*float64(j) - 0.77
	}
	dots, mv := make([]float32, rows), make([]float64, rows)
	PairDots(dots, a, b, ld, n)
	matVec64(mv, a, ld, x)
	for i := range rows {
		var want float32
		var want64 float64
		for j := range n {
			want += a[i*ld+j] * b[i*ld+j]
			want64 += float64(a[i*ld+j]) * x[j]
		}
		if dots[i] != want || mv[i] != want64 {
			t.Fatalf("row %d: PairDots %.9g and matVec64 %.17g, want %.9g and %.17g", i, dots[i], mv[i], want, want64)
		}
	}
}

// TestColSumSerialMatchesColSum: the serial column sums are ColSum's bit for bit (the same
// blocks of rows, added in the same order) and near the float64 sums, for a row count that
// ends in a partial block.
func TestColSumSerialMatchesColSum(t *testing.T) {
	const n, d = 300, 37
	rng := rand.New(rand.NewPCG(4, 1))
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	var ws Workspace
	want, got := make([]float32, d), make([]float32, d)
	ColSum(want, x, &ws)
	ColSumSerial(got, x, make([]float32, d))
	for j := range d {
		ref := 0.0
		for r := range n {
			ref += float64(x[r*d+j])
		}
		if math.Float32bits(got[j]) != math.Float32bits(want[j]) || math.Abs(float64(got[j])-ref) > 1e-4 {
			t.Fatalf("column %d: serial %v, ColSum %v, float64 %v", j, got[j], want[j], ref)
		}
	}
}

// TestGemmInBandsMatchesGemm: on a product that Gemm splits, the banded serial product
// equals Gemm's bit for bit, for every transpose, in both precisions and with beta 1. (In
// the pure-Go build Gemm does not cut float64 products, which gonum parallelises itself:
// GemmInBands then is Gemm, and the float64 half checks that it does not cut them.)
func TestGemmInBandsMatchesGemm(t *testing.T) {
	const m, n, k = 130, 100, 90
	if runtime.GOMAXPROCS(0) > 1 && GemmBand[float32](m, n, k) == m {
		t.Fatalf("a (%d, %d) x (%d, %d) product is not split: the test would not see the bands", m, k, k, n)
	}
	rng := rand.New(rand.NewPCG(5, 1))
	fill := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			a, b, c := fill(m*k), fill(k*n), fill(m*n)
			lda, ldb := k, n
			if ta {
				lda = m
			}
			if tb {
				ldb = k
			}
			want, got := append([]float64(nil), c...), append([]float64(nil), c...)
			Gemm(ta, tb, m, n, k, 1, a, lda, b, ldb, 1, want, n)
			GemmInBands(ta, tb, m, n, k, 1, a, lda, b, ldb, 1, got, n)
			want32, got32 := f32(c), f32(c)
			Gemm(ta, tb, m, n, k, 1, f32(a), lda, f32(b), ldb, 1, want32, n)
			GemmInBands(ta, tb, m, n, k, 1, f32(a), lda, f32(b), ldb, 1, got32, n)
			for i := range want {
				if got[i] != want[i] || math.Float32bits(got32[i]) != math.Float32bits(want32[i]) {
					t.Fatalf("transA=%t transB=%t: element %d is %v and %v in bands, %v and %v by Gemm", ta, tb, i, got[i], got32[i], want[i], want32[i])
				}
			}
		}
	}
}
