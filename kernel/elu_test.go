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
// portable loop, both from ELU's output.
func eluGradImpls() []sliceImpl[func(dx, y, dy []float32)] {
	return []sliceImpl[func(dx, y, dy []float32)]{{"dispatch", eluGrad32}, {"portable", eluGrad32Go}}
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

// TestELUGrad32: both implementations give, bit for bit, dy (min(y, 0) + 1) rounded to
// float32 (0 where that is below 2^-126) from the outputs y = elu(x) of the grid, NaN where
// x is NaN, and that is within 1.2e-7 |dy| of dy e^x where e^x is above 2^-21 (y + 1 rounds
// at float32's spacing at 1, 6e-8); at every start and length up to 40, and in place
// (dx = dy).
func TestELUGrad32(t *testing.T) {
	xs := eluGrid()
	ys := make([]float32, len(xs))
	elu32Go(ys, xs)
	dy := gradDy(len(xs))
	check := func(name string, dx, y, dy, x []float32) {
		t.Helper()
		for i, v := range y {
			want := dy[i] * (min(v, 0) + 1)
			if want > -0x1p-126 && want < 0x1p-126 {
				want = 0
			}
			if math.Float32bits(dx[i]) != math.Float32bits(want) && !(math.IsNaN(float64(want)) && math.IsNaN(float64(dx[i]))) {
				t.Fatalf("%s: elu' from y = %v, times %v = %v, want %v", name, v, dy[i], dx[i], want)
			}
			if e := math.Exp(float64(x[i])); x[i] <= 0 && e > 0x1p-21 {
				exact := float64(dy[i]) * e
				if math.Abs(float64(dx[i])-exact) > 1.2e-7*math.Abs(float64(dy[i])) && math.Abs(exact) >= 0x1p-126 {
					t.Fatalf("%s: elu'(%v) * %v = %v, want %v", name, x[i], dy[i], dx[i], exact)
				}
			}
		}
	}
	for _, im := range eluGradImpls() {
		dx := make([]float32, len(ys))
		im.f(dx, ys, dy)
		check(im.name, dx, ys, dy, xs)
		at := len(ys) - 50
		for lo := range 9 {
			for n := range 41 {
				dx := make([]float32, n)
				im.f(dx, ys[at+lo:at+lo+n], dy[at+lo:at+lo+n])
				check(fmt.Sprintf("%s, start %d, length %d", im.name, lo, n), dx, ys[at+lo:at+lo+n], dy[at+lo:at+lo+n], xs[at+lo:at+lo+n])
			}
		}
		in := slices.Clone(dy[:1000])
		im.f(in, ys[:1000], in)
		check(im.name+" in place", in, ys[:1000], dy[:1000], xs[:1000])
	}
}

// TestELUGrad32Flushes: products on both sides of 2^-126, from factors y + 1 down to 2^-24
// and |dy| down to 2^-138, are written as their float32 rounding, or 0 where that is
// subnormal, by both implementations alike.
func TestELUGrad32Flushes(t *testing.T) {
	var ys, dy []float32
	for i := range 40000 {
		ys = append(ys, -1+float32(math.Ldexp(1, -(i%25))))                                       // y + 1 from 1 down to 2^-24
		dy = append(dy, float32(math.Ldexp(1+float64(i%997)/997, -(i%137)-1))*float32(1-2*(i%2))) // |dy| from 2 down to 2^-138
	}
	for _, im := range eluGradImpls() {
		got := make([]float32, len(ys))
		im.f(got, ys, dy)
		flushed := 0
		for i, v := range ys {
			want := dy[i] * (v + 1)
			if math.Abs(float64(want)) < 0x1p-126 {
				want, flushed = 0, flushed+1
			}
			if math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("%s: (%v + 1) * %v = %v, want %v", im.name, v, dy[i], got[i], want)
			}
		}
		if flushed < 2000 {
			t.Errorf("%s: %d products flushed, want at least 2000", im.name, flushed)
		}
	}
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
