package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotBitForBit: Dot (the assembly's lanes for float32 where the processor has it)
// equals, bit for bit, its documented sums written out here: four partial sums of the
// elements i mod 4 in float64, the last len mod 4 elements added to the first, then
// (s0 + s1) + (s2 + s3); on lengths around the groups of four, with values of many
// magnitudes, where any other order of addition rounds differently.
func TestDotBitForBit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 9, 63, 64, 65, 1001, 4096} {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i] = float32(rng.NormFloat64() * math.Exp(8*rng.NormFloat64()))
			b[i] = float32(rng.NormFloat64())
		}
		var s [4]float64
		i := 0
		for ; i+4 <= n; i += 4 {
			for k := range s {
				s[k] += float64(a[i+k]) * float64(b[i+k])
			}
		}
		for ; i < n; i++ {
			s[0] += float64(a[i]) * float64(b[i])
		}
		want := (s[0] + s[1]) + (s[2] + s[3])
		if got := Dot(a, b); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("n %d: Dot %.17g, want %.17g", n, got, want)
		}
	}
}

// BenchmarkDot times Dot on the 800k float32 values of a P2 model's gradients (its sum of
// squares, as gradient clipping takes it), the AVX2 lanes where the processor has them:
// go test ./kernel -run '^$' -bench 'Dot$'.
func BenchmarkDot(b *testing.B) {
	x := make([]float32, 800000)
	for i := range x {
		x[i] = float32(i%7) * 0.1
	}
	b.SetBytes(int64(4 * len(x)))
	for b.Loop() {
		Dot(x, x)
	}
}
