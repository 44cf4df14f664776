package kernel

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"lipformer/internal/ref"
)

// sliceImpl is one implementation of a slice function under test.
type sliceImpl[F any] struct {
	name string
	f    F
}

// expNegImpls are expNeg32s (the AVX2 kernel where the processor has one, the portable
// loop on the tail) and the portable loop alone.
func expNegImpls() []sliceImpl[func(dst, src []float32)] {
	return []sliceImpl[func(dst, src []float32)]{{"dispatch", expNeg32s}, {"portable", expNeg32sGo}}
}

// TestExpNeg32 on a grid of 900001 values from 0 down to -90 in one slice (so that the
// vector kernel computes all but the last), and on special values in every lane.
func TestExpNeg32(t *testing.T) {
	t.Logf("vector kernels: %v", vecKernels())
	xs := make([]float32, 900001)
	for i := range xs {
		xs[i] = float32(-float64(i) * 1e-4)
	}
	specials := []float32{float32(math.NaN()), float32(math.Inf(-1)), 0, 1, float32(math.Inf(1)), -87.29, -87.31, -200}
	wantSpecial := func(x float32) float64 {
		switch {
		case x != x:
			return math.NaN()
		case x > 0:
			return 1 // positive x count as 0
		case x < -87.3:
			return 0
		}
		return math.Exp(float64(x))
	}
	for _, im := range expNegImpls() {
		got := make([]float32, len(xs))
		im.f(got, xs)
		for i, x := range xs {
			g, want := float64(got[i]), math.Exp(float64(x))
			if x < -87.3 { // near or below the smallest normal float32: flushed to 0
				if g != 0 {
					t.Fatalf("%s: exp(%v) = %v, want 0", im.name, x, g)
				}
				continue
			}
			if r := math.Abs(g-want) / want; r > 1e-7 {
				t.Fatalf("%s: exp(%v) = %v, want %v (relative error %.3g)", im.name, x, g, want, r)
			}
		}
		for shift := range specials { // each special value in each lane, in place
			v := make([]float32, 16)
			for i := range v {
				v[i] = specials[(i+shift)%len(specials)]
			}
			in := slices.Clone(v)
			im.f(v, v)
			for i, x := range in {
				g, want := float64(v[i]), wantSpecial(x)
				if math.IsNaN(want) != math.IsNaN(g) || (!math.IsNaN(want) && math.Abs(g-want) > 1e-7*want) {
					t.Fatalf("%s: exp(%v) = %v in lane %d, want %v", im.name, x, g, i, want)
				}
			}
		}
	}
}

// erf32 is erf32s on one value.
func erf32(x float32) float32 {
	v := []float32{x}
	erf32s(v, v)
	return v[0]
}

// TestErf32 on [-2.2, 2.2], which holds the arguments x/sqrt(2), |x| <= geluFastMax, of
// the GELU kernels.
func TestErf32(t *testing.T) {
	for i := -220000; i <= 220000; i++ {
		x := float32(float64(i) * 1e-5)
		if d := math.Abs(float64(erf32(x)) - math.Erf(float64(x))); d > 3e-7 {
			t.Fatalf("erf(%v) = %v, want %v", x, erf32(x), math.Erf(float64(x)))
		}
	}
}

// geluGrid is float32 inputs from -12 to 12 and the NaN and infinities, which sit among
// the others so that the vector kernels meet them.
func geluGrid() []float32 {
	var xs []float32
	for i := -120000; i <= 120000; i++ {
		xs = append(xs, float32(float64(i)*1e-4))
	}
	xs[5] = float32(math.NaN())
	xs[1001] = float32(math.Inf(1))
	xs[2002] = float32(math.Inf(-1))
	return append(xs, float32(math.NaN()))
}

// geluWithin reports whether got is within tol (1 + |x|) of want, or both are NaN.
func geluWithin(got float32, want, x, tol float64) bool {
	if math.IsNaN(want) || math.IsNaN(float64(got)) {
		return math.IsNaN(want) && math.IsNaN(float64(got))
	}
	if math.IsInf(want, 0) {
		return float64(got) == want
	}
	return math.Abs(float64(got)-want) <= tol*(1+math.Abs(x))
}

// geluGradRef is dy * gelu'(x) in float64: dy Phi(x) at the infinities, where x phi(x)
// tends to 0.
func geluGradRef(x, dy float32) float64 {
	switch {
	case math.IsInf(float64(x), -1):
		return 0
	case math.IsInf(float64(x), 1):
		return float64(dy)
	}
	return float64(dy) * geluDeriv(float64(x))
}

// TestGELUFloat32MatchesReference: GELU in float32, the fast kernel on parallel chunks (as
// the GELU op runs it), agrees with the exact float64 function to 2e-7 (1 + |x|), NaN
// mapping to NaN.
func TestGELUFloat32MatchesReference(t *testing.T) {
	xs := geluGrid()
	got := make([]float32, len(xs))
	GELU(got, xs)
	for i, v := range xs {
		if want := ref.GELU(float64(v)); !geluWithin(float32(got[i]), want, float64(v), 2e-7) {
			t.Fatalf("gelu(%v) = %v, want %v", v, got[i], want)
		}
	}
}

// geluImpls are gelu32 (the AVX2 kernel where the processor has one) and the portable loop.
func geluImpls() []sliceImpl[func(y, x []float32)] {
	return []sliceImpl[func(y, x []float32)]{{"dispatch", gelu32}, {"portable", gelu32Go}}
}

// geluGradImpls are geluGrad32 (the AVX2 kernel where the processor has one) and the
// portable loop.
func geluGradImpls() []sliceImpl[func(dx, x, dy []float32)] {
	return []sliceImpl[func(dx, x, dy []float32)]{{"dispatch", geluGrad32}, {"portable", geluGrad32Go}}
}

// TestGELU32: both implementations agree with the exact float64 function to 2e-7 (1 + |x|)
// on the grid, and on every start and length up to 80 of it around the fast range's edge,
// where vectors with and without outside inputs alternate.
func TestGELU32(t *testing.T) {
	xs := geluGrid()
	edge := xs[120000-30005 : 120000-30005+100] // -3.0005 .. -2.9906: five inputs outside, then inside
	for _, im := range geluImpls() {
		got := make([]float32, len(xs))
		im.f(got, xs)
		for i, v := range xs {
			if want := ref.GELU(float64(v)); !geluWithin(got[i], want, float64(v), 2e-7) {
				t.Fatalf("%s: gelu(%v) = %v, want %v", im.name, v, got[i], want)
			}
		}
		for lo := range 9 {
			for n := range 81 {
				y := make([]float32, n)
				im.f(y, edge[lo:lo+n])
				for i, v := range edge[lo : lo+n] {
					if want := ref.GELU(float64(v)); !geluWithin(y[i], want, float64(v), 2e-7) {
						t.Fatalf("%s: start %d, length %d: gelu(%v) = %v, want %v", im.name, lo, n, v, y[i], want)
					}
				}
			}
		}
	}
}

// TestGELUGradFloat32MatchesReference: both implementations of the fast float32
// derivative agree with the exact float64 one to 3e-7 (1 + |x|), on the grid and on every
// start and length up to 80 around the fast range's edge.
func TestGELUGradFloat32MatchesReference(t *testing.T) {
	xs := geluGrid()
	dy := gradDy(len(xs))
	check := func(name string, dx, x, dy []float32) {
		t.Helper()
		for i, v := range x {
			if want := geluGradRef(v, dy[i]); !geluWithin(dx[i], want, float64(v), 3e-7) {
				t.Fatalf("%s: gelu'(%v) * %v = %v, want %v", name, v, dy[i], dx[i], want)
			}
		}
	}
	for _, im := range geluGradImpls() {
		dx := make([]float32, len(xs))
		im.f(dx, xs, dy)
		check(im.name, dx, xs, dy)
		at := 120000 + 29950 // 2.995 .. 3.004: inside, then outside
		for lo := range 9 {
			for n := range 81 {
				dx := make([]float32, n)
				im.f(dx, xs[at+lo:at+lo+n], dy[at+lo:at+lo+n])
				check(fmt.Sprintf("%s, start %d, length %d", im.name, lo, n), dx, xs[at+lo:at+lo+n], dy[at+lo:at+lo+n])
			}
		}
	}
}

// gradDy is n upstream gradients for the derivative tests: 1, 0.63, 0.26 in turn, not
// powers of 2, so that the product with dy rounds too.
func gradDy(n int) []float32 {
	dy := make([]float32, n)
	for i := range dy {
		dy[i] = 1 - 0.37*float32(i%3)
	}
	return dy
}

// BenchmarkFastMath compares the dispatching kernels (AVX2 where the processor has it) with
// the portable loops on 2^20 inputs inside GELU's fast range:
//
//	go test -run '^$' -bench FastMath -benchtime 20x ./kernel
func BenchmarkFastMath(b *testing.B) {
	n := 1 << 20
	x, y, dy := make([]float32, n), make([]float32, n), gradDy(n)
	for i := range x {
		x[i] = float32(i%5800)/1000 - 2.9
	}
	out := make([]float32, n) // ELU's outputs of x, which its gradient reads
	elu32Go(out, x)
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"gelu/dispatch", func() { gelu32(y, x) }},
		{"gelu/portable", func() { gelu32Go(y, x) }},
		{"gelu-grad/dispatch", func() { geluGrad32(y, x, dy) }},
		{"gelu-grad/portable", func() { geluGrad32Go(y, x, dy) }},
		{"exp/dispatch", func() { expNeg32s(y, x) }},
		{"exp/portable", func() { expNeg32sGo(y, x) }},
		{"elu/dispatch", func() { elu32(y, x) }},
		{"elu/portable", func() { elu32Go(y, x) }},
		{"elu-grad/dispatch", func() { eluGrad32(y, out, dy) }},
		{"elu-grad/portable", func() { eluGrad32Go(y, out, dy) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				c.f()
			}
		})
	}
}
