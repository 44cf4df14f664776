package model

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"lipformer/spec"
)

// attack searches the token-norm ball of radius r around the embedded window x (T, D) for
// a perturbation that lifts class j's logit at position t to class y's: projected
// steepest ascent on z_j - z_y (each token moved along its own gradient, the steepest
// direction of the token norm, then projected back onto its ball), from the centre and
// from random points of the ball. It returns the largest z_j - z_y met.
func attack(t *testing.T, em *embeddedMap, x []float64, pos, y, j int, r float64, rng *rand.Rand) float64 {
	t.Helper()
	T, D, V := em.m.Cfg.Context, em.m.Cfg.Width, em.m.Cfg.Vocab
	u := make([]float64, T*V)
	u[pos*V+j], u[pos*V+y] = 1, -1
	best := math.Inf(-1)
	for start := range 4 {
		delta := make([]float64, T*D)
		if start > 0 {
			for k := range delta {
				delta[k] = rng.NormFloat64()
			}
			project(delta, D, r)
		}
		for step := range 60 {
			xd := append([]float64(nil), x...)
			floats.Add(xd, delta)
			z, g, err := em.run(xd, u)
			if err != nil {
				t.Fatal(err)
			}
			best = math.Max(best, z[pos*V+j]-z[pos*V+y])
			eta := r * math.Pow(0.93, float64(step))
			for k := range T {
				gk := g[k*D : (k+1)*D]
				if n := floats.Norm(gk, 2); n > 0 {
					floats.AddScaled(delta[k*D:(k+1)*D], eta/n, gk)
				}
			}
			project(delta, D, r)
		}
	}
	return best
}

// project scales every token of delta (T, D) of 2-norm above r back onto the sphere of
// radius r: the projection onto the token-norm ball.
func project(delta []float64, D int, r float64) {
	for k := 0; k < len(delta); k += D {
		if n := floats.Norm(delta[k:k+D], 2); n > r {
			floats.Scale(r/n, delta[k:k+D])
		}
	}
}

// embeddedWindow is the embedded window of random tokens: token plus position vectors.
func embeddedWindow(m *Model, rng *rand.Rand) []float64 {
	T, D := m.Cfg.Context, m.Cfg.Width
	tok, pos := m.Tok.W.Float64s(), m.Pos.W.Float64s()
	x := make([]float64, T*D)
	for p := range T {
		id := rng.IntN(m.Cfg.Vocab)
		for k := range D {
			x[p*D+k] = tok[id*D+k] + pos[p*D+k]
		}
	}
	return x
}

// TestCertifiedRadiusIsSound: on models bounded end to end (with and without ball norms in
// the blocks, K = 10 and 1000), no adversarial search inside the token-norm ball of a
// position's certified radius changes its top-1 byte, for every class, and the per-class
// radius is never below the whole-model one.
func TestCertifiedRadiusIsSound(t *testing.T) {
	for _, c := range []struct {
		k    float64
		norm spec.Norm
	}{{10, spec.BallPre}, {1000, spec.NoLN}, {10, spec.NoLN}} {
		cfg := Config{Arch: spec.InvertibleL2, Layers: 2, Heads: 2, Width: 8, Context: 4, Vocab: 5, Norm: c.norm, LipC: 0.9,
			Dtype: spec.Float64, Std: 0.5, EmbedStd: 1, LipK: c.k}.WithCertifiedRecipe()
		m, err := New(cfg, 7)
		if err != nil {
			t.Fatal(err)
		}
		m.PowerIterate(500)
		b, err := m.RadiusBound()
		if err != nil {
			t.Fatal(err)
		}
		em, err := newEmbeddedMap(m)
		if err != nil {
			t.Fatal(err)
		}
		defer em.vm.Close()
		rng := rand.New(rand.NewPCG(3, 4))
		closest, checked := math.Inf(1), 0
		for range 2 {
			x := embeddedWindow(m, rng)
			z, _, err := em.run(x, make([]float64, cfg.Context*cfg.Vocab))
			if err != nil {
				t.Fatal(err)
			}
			for pos := range cfg.Context {
				zt := z[pos*cfg.Vocab : (pos+1)*cfg.Vocab]
				y, r, whole := b.Radius(zt)
				if !(r >= whole*(1-1e-12)) || !(whole > 0) {
					t.Fatalf("K = %g: radii per class %v, whole-model %v, want 0 < whole <= per class", c.k, r, whole)
				}
				for j := range cfg.Vocab {
					if j == y {
						continue
					}
					gap := attack(t, em, x, pos, y, j, math.Max(r, whole)*(1-1e-9), rng)
					if gap >= 0 {
						t.Fatalf("K = %g, position %d: the search lifted class %d to the top-1 %d (z_j - z_y = %v) within the certified radii %v (per class) and %v (whole model)", c.k, pos, j, y, gap, r, whole)
					}
					closest = math.Min(closest, -gap/(zt[y]-zt[j]))
					checked++
				}
			}
		}
		t.Logf("K = %g %s: %d (position, class) pairs attacked; the closest kept %.3g of its margin", c.k, c.norm, checked, closest)
	}
}

// tightModel is a model whose certificate is nearly attained: branches of coefficient
// 0.01, a final ball norm no input leaves, and a head of orthogonal columns of equal norm
// and zero mean (the ball norm's centring keeps them), so that the logit margin of y over
// j moves by ||w_y - w_j|| = sqrt(2) ||W||_2 per unit of movement of the position's own
// embedding along w_j - w_y.
func tightModel(t *testing.T) *Model {
	t.Helper()
	cfg := Config{Arch: spec.InvertibleL2, Layers: 1, Heads: 2, Width: 8, Context: 4, Vocab: 4, Norm: spec.NoLN, LipC: 0.01,
		Dtype: spec.Float64, Std: 0.3, EmbedStd: 0.3, BallRadius: 100, LipK: 5}.WithCertifiedRecipe()
	m, err := New(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	w := m.Head.W.Value.Data().([]float64) // (D, V)
	clear(w)
	for j := range cfg.Vocab {
		w[2*j*cfg.Vocab+j], w[(2*j+1)*cfg.Vocab+j] = 3, -3
	}
	m.PowerIterate(50)
	return m
}

// TestCertifiedRadiusIsTightEnoughToSeeAFactorDropped: on tightModel no adversarial search
// flips the top-1 byte of a position inside either radius claimed, while the same search
// flips every position inside the radius that a certificate without the head factor, or
// without the sqrt(2) of the whole-model form, would claim: a radius that dropped either
// factor fails here.
func TestCertifiedRadiusIsTightEnoughToSeeAFactorDropped(t *testing.T) {
	m := tightModel(t)
	b, err := m.RadiusBound()
	if err != nil {
		t.Fatal(err)
	}
	head := float64(b.Whole / b.Body)
	if !(head > 4) {
		t.Fatalf("head factor %v, want the gain near 5 / 1.01^2", head)
	}
	em, err := newEmbeddedMap(m)
	if err != nil {
		t.Fatal(err)
	}
	defer em.vm.Close()
	T, V := m.Cfg.Context, m.Cfg.Vocab
	rng := rand.New(rand.NewPCG(5, 6))
	broken := map[string]func(margin float64) float64{
		"without the head factor": func(margin float64) float64 { return margin / (math.Sqrt2 * float64(b.Body)) },
		"without sqrt(2)":         func(margin float64) float64 { return margin / float64(b.Whole) },
	}
	flipped := map[string]int{}
	for range 3 {
		x := make([]float64, T*m.Cfg.Width)
		for k := range x {
			x[k] = 0.3 * rng.NormFloat64()
		}
		z, _, err := em.run(x, make([]float64, T*V))
		if err != nil {
			t.Fatal(err)
		}
		for pos := range T {
			zt := z[pos*V : (pos+1)*V]
			y, r, whole := b.Radius(zt)
			j, second := -1, math.Inf(-1)
			for k, v := range zt {
				if k != y && v > second {
					j, second = k, v
				}
			}
			if gap := attack(t, em, x, pos, y, j, math.Max(r, whole)*(1-1e-9), rng); gap >= 0 {
				t.Fatalf("position %d: flipped to %d within the certified radii %v (per class) and %v (whole model)", pos, j, r, whole)
			}
			if math.Abs(r-whole) > 1e-9*r {
				t.Errorf("position %d: per-class radius %v, whole-model %v: equal for this head", pos, r, whole)
			}
			for name, f := range broken {
				if attack(t, em, x, pos, y, j, f(zt[y]-second), rng) >= 0 {
					flipped[name]++
				}
			}
		}
	}
	for name := range broken {
		if flipped[name] == 0 {
			t.Errorf("the radius %s is never exceeded: the search is too weak to see it", name)
		}
	}
	t.Logf("positions flipped inside the broken radii: %v of %d", flipped, 3*T)
}

// TestRadiusOfAnInfiniteCertificateIsZero: a dot-product model has no certificate, so every
// radius is 0 and the bound names the factors without a bound; the distances between bytes
// are the token table's.
func TestRadiusOfAnInfiniteCertificateIsZero(t *testing.T) {
	m, err := New(tiny("dp"), 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.RadiusBound()
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(float64(b.Body), 1) || !strings.Contains(b.Why, "h0.attn") || !strings.Contains(b.Why, "not Lipschitz") {
		t.Fatalf("dp: body %v, why %q; want infinite, naming h0.attn", b.Body, b.Why)
	}
	tok := m.Tok.W.Float64s()
	D := m.Cfg.Width
	nearest, farthest := math.Inf(1), 0.0
	for a := range m.Cfg.Vocab {
		for c := range m.Cfg.Vocab {
			if a != c {
				d := 0.0
				for k := range D {
					d += (tok[a*D+k] - tok[c*D+k]) * (tok[a*D+k] - tok[c*D+k])
				}
				nearest, farthest = math.Min(nearest, math.Sqrt(d)), math.Max(farthest, math.Sqrt(d))
			}
		}
	}
	if math.Abs(b.NearestBytes-nearest) > 1e-12 || math.Abs(b.FarthestBytes-farthest) > 1e-12 || !(nearest < farthest) {
		t.Errorf("distances between bytes %v to %v, want %v to %v", b.NearestBytes, b.FarthestBytes, nearest, farthest)
	}
	z := make([]float64, m.Cfg.Vocab)
	z[1] = 10
	if y, r, whole := b.Radius(z); y != 1 || r != 0 || whole != 0 {
		t.Fatalf("dp: top %d, radii %v and %v; want 1, 0 and 0", y, r, whole)
	}
}
