package kernel

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// eluGrid is float32 inputs from -100 to 10, values near 0 and the special values, in one
// slice (so that the vector kernels compute all but the last few).
func eluGrid() []float32 {
	var xs []float32
	for i := -1000000; i <= 100000; i++ {
		xs = append(xs, float32(float64(i)*1e-4))
	}
	for e := -45; e <= -1; e++ {
		xs = append(xs, -float32(math.Pow(10, float64(e))), float32(math.Pow(10, float64(e))))
	}
	return append(xs, float32(math.NaN()), float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.Copysign(0, -1)), -87.29, -87.31, float32(math.NaN()))
}

// eluImpls are elu32 (the AVX2 kernel where the processor has one) and the portable loop.
func eluImpls() []sliceImpl[func(y, x []float32)] {
	return []sliceImpl[func(y, x []float32)]{{"dispatch", elu32}, {"portable", elu32Go}}
}

// eluGradImpls are eluGrad32 (the AVX2 kernel where the processor has one) and the
// portable loop.
func eluGradImpls() []sliceImpl[func(dx, x, dy []float32)] {
	return []sliceImpl[func(dx, x, dy []float32)]{{"dispatch", eluGrad32}, {"portable", eluGrad32Go}}
}

// ulps32 is the distance from got to want in units of float32's last place at want
// (at least the smallest normal's), 0 when both are NaN or equal, +Inf when only one is NaN.
func ulps32(got float32, want float64) float64 {
	switch {
	case math.IsNaN(want) || math.IsNaN(float64(got)):
		if math.IsNaN(want) && math.IsNaN(float64(got)) {
			return 0
		}
		return math.Inf(1)
	case float64(got) == want:
		return 0
	}
	_, e := math.Frexp(max(math.Abs(want), 0x1p-126))
	return math.Abs(float64(got)-want) / math.Ldexp(1, e-24)
}

// TestELU32: both implementations are within 1 float32 ulp of the exact float64 function
// (e^x - 1 keeps its relative accuracy near 0), x where x > 0, -1 below -87.3, NaN for NaN,
// at every start and length up to 40 too.
func TestELU32(t *testing.T) {
	xs := eluGrid()
	check := func(name string, y, x []float32) {
		t.Helper()
		for i, v := range x {
			if u := ulps32(y[i], elu(float64(v))); u > 1 {
				t.Fatalf("%s: elu(%v) = %v, want %v (%.2f ulps)", name, v, y[i], elu(float64(v)), u)
			}
		}
	}
	for _, im := range eluImpls() {
		y := make([]float32, len(xs))
		im.f(y, xs)
		check(im.name, y, xs)
		tail := xs[len(xs)-50:]
		for lo := range 9 {
			for n := range 41 {
				y := make([]float32, n)
				im.f(y, tail[lo:lo+n])
				check(fmt.Sprintf("%s, start %d, length %d", im.name, lo, n), y, tail[lo:lo+n])
			}
		}
		v := slices.Clone(xs[:1000]) // in place
		im.f(v, v)
		check(im.name+" in place", v, xs[:1000])
	}
}

// TestELUGrad32: both implementations give dy e^x within 1.6e-7 relative for x <= 0 (e^x
// within 1e-7, then the product's rounding; 0 below -87.3), dy for x > 0 and NaN for NaN,
// on the grid, at every start and length up to 40, and in place (dx = dy). Products
// within that tolerance of 2^-126 or below are TestELUGrad32FlushesExactly's.
func TestELUGrad32(t *testing.T) {
	xs := eluGrid()
	dy := gradDy(len(xs))
	check := func(name string, dx, x, dy []float32) {
		t.Helper()
		for i, v := range x {
			want := float64(dy[i]) * eluDeriv(float64(v))
			if v < -87.3 {
				want = 0
			}
			got := float64(dx[i])
			tol := 1.6e-7 * math.Abs(want)
			if want != 0 && math.Abs(want) < 0x1p-126+tol {
				continue
			}
			if math.IsNaN(want) != math.IsNaN(got) || math.Abs(got-want) > tol {
				t.Fatalf("%s: elu'(%v) * %v = %v, want %v", name, v, dy[i], dx[i], want)
			}
		}
	}
	for _, im := range eluGradImpls() {
		dx := make([]float32, len(xs))
		im.f(dx, xs, dy)
		check(im.name, dx, xs, dy)
		at := len(xs) - 50
		for lo := range 9 {
			for n := range 41 {
				dx := make([]float32, n)
				im.f(dx, xs[at+lo:at+lo+n], dy[at+lo:at+lo+n])
				check(fmt.Sprintf("%s, start %d, length %d", im.name, lo, n), dx, xs[at+lo:at+lo+n], dy[at+lo:at+lo+n])
			}
		}
		in := slices.Clone(dy[:1000])
		im.f(in, xs[:1000], in)
		check(im.name+" in place", in, xs[:1000], dy[:1000])
	}
}

// TestELUGrad32FlushesExactly: both implementations write dy times their own e^x (read
// with dy = 1) rounded to float32, and 0 where that is subnormal, bit for bit: for
// products on both sides of 2^-126 with x on both sides of -20 (where the AVX2 kernel
// changes its way of forming the product) and vectors that mix the two, and for dy
// stepping one float32 at a time across 2^-126 / e^x, where the rounding decides.
func TestELUGrad32FlushesExactly(t *testing.T) {
	var xs, dy []float32
	for i := range 40000 {
		xs = append(xs, -30*float32(i%1009)/1009)                                                 // e^x from 1 down to 9e-14
		dy = append(dy, float32(math.Ldexp(1+float64(i%997)/997, -(i%137)-1))*float32(1-2*(i%2))) // |dy| from 2 down to 2^-138
	}
	for _, im := range eluGradImpls() {
		edge := make([]float32, 64) // x from -20.5 to -28.4
		for j := range edge {
			edge[j] = -20.5 - float32(j)/8
		}
		eEdge := make([]float32, len(edge))
		im.f(eEdge, edge, ones(len(edge)))
		xs, dy := slices.Clone(xs), slices.Clone(dy)
		for j, x := range edge {
			d := float32(0x1p-126 / float64(eEdge[j]))
			for range 64 {
				d = math.Nextafter32(d, 0)
			}
			for range 128 {
				xs, dy = append(xs, x), append(dy, d)
				d = math.Nextafter32(d, 1)
			}
		}
		e, got := make([]float32, len(xs)), make([]float32, len(xs))
		im.f(e, xs, ones(len(xs)))
		im.f(got, xs, dy)
		flushed, kept := 0, 0
		for i := range xs {
			want := dy[i] * e[i] // float32, gradual underflow
			if math.Abs(float64(want)) < 0x1p-126 {
				want = 0
				flushed++
			} else if want == 0x1p-126 {
				kept++
			}
			if math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("%s: elu'(%v) * %v = %v (%08x), want %v (%08x)", im.name, xs[i], dy[i], got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
			}
		}
		if flushed < 2000 || kept < 32 {
			t.Errorf("%s: %d products flushed and %d of exactly 2^-126, want at least 2000 and 32", im.name, flushed, kept)
		}
	}
}

// ones is n float32 ones.
func ones(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

// TestELUFloat32Chunks: ELU in float32, the fast kernels on parallel chunks (as the ELU
// op runs them), is within 1 ulp.
func TestELUFloat32Chunks(t *testing.T) {
	xs := eluGrid()
	got := make([]float32, len(xs))
	ELU(got, xs)
	for i, v := range got {
		if u := ulps32(float32(v), elu(float64(xs[i]))); u > 1 {
			t.Fatalf("elu(%v) = %v, want %v", xs[i], v, elu(float64(xs[i])))
		}
	}
}
