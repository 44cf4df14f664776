package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// adamLoop is AdamUpdate's definition, one element at a time.
func adamLoop(p, g, m, v []float32, s AdamStep[float32]) {
	for i := range p {
		mi := s.Beta1*m[i] + s.OneMinusB1*g[i]
		vi := s.Beta2*v[i] + s.OneMinusB2*g[i]*g[i]
		m[i], v[i] = mi, vi
		denom := float32(math.Sqrt(float64(vi)))*s.InvRootBc2 + s.Eps
		p[i] = s.Keep*p[i] - s.StepSize*mi/denom
	}
}

// TestAdamUpdateMatchesLoop: the float32 update (AVX2 where the processor has it) leaves
// p, m and v bit for bit where the loop does, at lengths around the vectors' boundary, on
// gradients and moments across many orders of magnitude, subnormal second moments
// included, and on 2^20 random positive second moments whose square roots decide the
// result alone.
func TestAdamUpdateMatchesLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	s := AdamStep[float32]{Keep: 0.999, Beta1: 0.9, OneMinusB1: 0.1, Beta2: 0.99, OneMinusB2: 1 - float32(0.99),
		StepSize: 1.3e-3, InvRootBc2: 7.1, Eps: 1e-8}
	check := func(what string, p, g, m, v []float32, s AdamStep[float32]) {
		t.Helper()
		wp, wm, wv := append([]float32(nil), p...), append([]float32(nil), m...), append([]float32(nil), v...)
		adamLoop(wp, g, wm, wv, s)
		AdamUpdate(p, g, m, v, s)
		for i := range p {
			if math.Float32bits(p[i]) != math.Float32bits(wp[i]) || math.Float32bits(m[i]) != math.Float32bits(wm[i]) || math.Float32bits(v[i]) != math.Float32bits(wv[i]) {
				t.Fatalf("%s: element %d: p, m, v = %v, %v, %v, want %v, %v, %v", what, i, p[i], m[i], v[i], wp[i], wm[i], wv[i])
			}
		}
	}
	wide := func(n int, scale float64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * scale * math.Exp(6*rng.NormFloat64()))
		}
		return x
	}
	for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 1001} {
		p, g, m, v := wide(n, 1), wide(n, 1e-3), wide(n, 1e-3), wide(n, 1e-6)
		for i := range v {
			v[i] = float32(math.Abs(float64(v[i])))
			if i%5 == 0 {
				v[i] = math.Float32frombits(uint32(rng.IntN(1 << 23))) // subnormal
			}
		}
		check("wide", p, g, m, v, s)
	}
	const n = 1 << 20
	p, g, m, v := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range v {
		p[i], m[i], v[i] = 1, 1, math.Float32frombits(rng.Uint32()&0x7f7fffff) // finite, positive
	}
	check("square roots", p, g, m, v, AdamStep[float32]{Keep: 1, Beta1: 1, Beta2: 1, StepSize: 1, InvRootBc2: 1})
}
