package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"lipformer/spec"
)

// TestTokenDiameterIsTheFarthestPair: on a table whose rows are known points, the diameter
// is the distance of the farthest pair (4, between the first two rows), not the largest
// norm (3) nor twice it (6).
func TestTokenDiameterIsTheFarthestPair(t *testing.T) {
	cfg := Config{Arch: spec.InvertibleL2, Layers: 1, Heads: 1, Width: 2, Context: 2, Vocab: 3, LipC: 0.5, Dtype: spec.Float64, Std: 0.1, Norm: spec.NoLN}
	m, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	copy(m.Tok.W.Value.Data().([]float64), []float64{3, 0, -1, 0, 0, 2})
	if got := m.TokenDiameter(); math.Abs(got-4) > 1e-12 {
		t.Fatalf("diameter %v, want 4", got)
	}
}

// TestLogitRangeBoundsEveryPairOfTexts: for models bounded end to end and an unbounded
// invertible one, no two random texts of the context's length have logits farther apart at
// any position than the certified logit range, and the range is the token-norm product
// times the diameter.
func TestLogitRangeBoundsEveryPairOfTexts(t *testing.T) {
	for _, k := range []float64{0, 1, 10} {
		cfg := Config{Arch: spec.InvertibleL2, Layers: 2, Heads: 2, Width: 4, Context: 4, Vocab: 5, Norm: spec.NoLN, LipC: 0.9,
			Dtype: spec.Float64, Std: 0.5, LipK: k}.WithCertifiedRecipe()
		m, err := New(cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		m.PowerIterate(500)
		cert, err := m.Certificate()
		if err != nil {
			t.Fatal(err)
		}
		want := float64(cert.Tok2) * m.TokenDiameter()
		if got := float64(cert.LogitRange); math.Abs(got-want) > 1e-12*want || !(got > 0) {
			t.Fatalf("K = %g: logit range %v, want %v", k, got, want)
		}
		em, err := newEmbeddedMap(m)
		if err != nil {
			t.Fatal(err)
		}
		T, D, V := cfg.Context, cfg.Width, cfg.Vocab
		tok, pos := m.Tok.W.Float64s(), m.Pos.W.Float64s()
		embed := func(ids []int) []float64 {
			x := make([]float64, T*D)
			for p, id := range ids {
				for j := range D {
					x[p*D+j] = tok[id*D+j] + pos[p*D+j]
				}
			}
			return x
		}
		rng := rand.New(rand.NewPCG(7, uint64(k)))
		u := make([]float64, T*V)
		var worst float64
		for range 200 {
			a, b := make([]int, T), make([]int, T)
			for p := range T {
				a[p], b[p] = rng.IntN(V), rng.IntN(V)
			}
			za, _, err := em.run(embed(a), u)
			if err != nil {
				t.Fatal(err)
			}
			zb, _, err := em.run(embed(b), u)
			if err != nil {
				t.Fatal(err)
			}
			for p := range T {
				var s float64
				for j := range V {
					d := za[p*V+j] - zb[p*V+j]
					s += d * d
				}
				worst = math.Max(worst, math.Sqrt(s))
			}
		}
		em.vm.Close()
		if worst > float64(cert.LogitRange) {
			t.Errorf("K = %g: logits of two texts %v apart, above the certified range %v", k, worst, cert.LogitRange)
		}
		t.Logf("K = %g: largest logit distance %.4g, certified range %.4g", k, worst, float64(cert.LogitRange))
	}
}
