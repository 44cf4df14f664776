package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"lipformer/layers"
	"lipformer/spec"
)

// TestTokenDiameterIsTheFarthestPair: on a table whose rows are known points, the diameter
// is the distance of the farthest pair (4, between the first two rows), not the largest
// norm (3) nor twice it (6).
func TestTokenDiameterIsTheFarthestPair(t *testing.T) {
	m := threePoints(t)
	if got := m.TokenDiameter(); math.Abs(got-4) > 1e-12 {
		t.Fatalf("diameter %v, want 4", got)
	}
}

// threePoints is a model of width 2 whose token table's rows are (3, 0), (-1, 0), (0, 2).
func threePoints(t *testing.T) *Model {
	t.Helper()
	cfg := Config{Arch: spec.InvertibleL2, Layers: 1, Heads: 1, Width: 2, Context: 2, Vocab: 3, LipC: 0.5, Dtype: spec.Float64, Std: 0.1, Norm: spec.NoLN}
	m, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	copy(m.Tok.W.Value.Data().([]float64), []float64{3, 0, -1, 0, 0, 2})
	return m
}

// TestTokenBallHoldsTheRows: three points whose smallest enclosing circle is their
// circumcircle, centre (1, 1/4) and radius sqrt(65)/4, further than the origin's 3: the
// radius returned is the largest distance of a row from the centre returned, within the
// Badoiu-Clarkson factor of the smallest.
func TestTokenBallHoldsTheRows(t *testing.T) {
	m := threePoints(t)
	c, r := m.TokenBall()
	smallest := math.Sqrt(65) / 4
	if r < smallest || r > smallest*(1+1/math.Sqrt(ballSteps)) {
		t.Errorf("radius %v, want within [%v, %v]", r, smallest, smallest*(1+1/math.Sqrt(ballSteps)))
	}
	far := math.Max(math.Hypot(3-c[0], c[1]), math.Max(math.Hypot(-1-c[0], c[1]), math.Hypot(c[0], 2-c[1])))
	if math.Abs(far-r) > 1e-12 {
		t.Errorf("radius %v about centre %v, but the farthest row is %v from it", r, c, far)
	}
}

// TestLogitRangeBoundsEveryPairOfTexts: for models bounded end to end and an unbounded
// invertible one, no two random texts of the context's length have logits farther apart at
// any position than the certified logit range, and the range is the token-norm product
// times the diameter; with the embeddings held in a ball of radius r, the range is at most
// 2 r K.
func TestLogitRangeBoundsEveryPairOfTexts(t *testing.T) {
	for _, c := range []struct{ k, r float64 }{{0, 0}, {1, 0}, {10, 0}, {10, 0.2}} {
		k := c.k
		cfg := Config{Arch: spec.InvertibleL2, Layers: 2, Heads: 2, Width: 4, Context: 4, Vocab: 5, Norm: spec.NoLN, LipC: 0.9,
			Dtype: spec.Float64, Std: 0.5, LipK: k, EmbedRadius: c.r}.WithCertifiedRecipe()
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
		if d := m.TokenDiameter(); c.r > 0 && (d > 2*c.r*(1+1e-12) || float64(cert.LogitRange) > 2*c.r*k*(1+1e-6)) {
			t.Fatalf("embeddings in a ball of radius %g: diameter %v, logit range %v, want at most %g and %g", c.r, d, cert.LogitRange, 2*c.r, 2*c.r*k)
		}
		centre, radius := m.TokenBall()
		if d := m.TokenDiameter(); radius < d/2*(1-1e-12) || radius > d {
			t.Fatalf("K = %g: token radius %v outside [diameter / 2, diameter] = [%v, %v]", k, radius, d/2, d)
		}
		if c.r > 0 && radius > c.r*(1+1e-12) {
			t.Fatalf("embeddings in a ball of radius %g: token radius %v", c.r, radius)
		}
		if got, want := float64(cert.LogitRadius), float64(cert.Tok2)*radius; math.Abs(got-want) > 1e-12*want {
			t.Fatalf("K = %g: logit radius %v, want %v", k, got, want)
		}
		em, err := newEmbeddedMap(m)
		if err != nil {
			t.Fatal(err)
		}
		T, D, V := cfg.Context, cfg.Width, cfg.Vocab
		tok, pos := m.Tok.Rows(), m.Pos.W.Float64s()
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
		x0 := make([]float64, T*D) // every token vector at the ball's centre
		for p := range T {
			for j := range D {
				x0[p*D+j] = centre[j] + pos[p*D+j]
			}
		}
		z0, _, err := em.run(x0, u)
		if err != nil {
			t.Fatal(err)
		}
		z0 = append([]float64(nil), z0...)
		var worst, worstFromCentre float64
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
				var s, s0 float64
				for j := range V {
					d, d0 := za[p*V+j]-zb[p*V+j], za[p*V+j]-z0[p*V+j]
					s, s0 = s+d*d, s0+d0*d0
				}
				worst = math.Max(worst, math.Sqrt(s))
				worstFromCentre = math.Max(worstFromCentre, math.Sqrt(s0))
			}
		}
		em.vm.Close()
		if worst > float64(cert.LogitRange) {
			t.Errorf("K = %g: logits of two texts %v apart, above the certified range %v", k, worst, cert.LogitRange)
		}
		if worstFromCentre > float64(cert.LogitRadius) {
			t.Errorf("K = %g: logits of a text %v from those of the centre's input, above the certified radius %v", k, worstFromCentre, cert.LogitRadius)
		}
		t.Logf("K = %g: largest logit distance %.4g, certified range %.4g; from the centre %.4g, certified radius %.4g", k, worst, float64(cert.LogitRange), worstFromCentre, float64(cert.LogitRadius))
	}
}

// TestRescaledEmbeddingsKeepTheLogitsAndTheRange checks the rescaling of docs/math.md ("The
// certified logit range"): embeddings times s, each attention's W^Q over s and W^O times
// s^2 (its value path reads W^Q twice), each MLP's log gain minus ln s and output bias
// times s, every ball radius times s, and K over s give the same logits; the certified
// constant falls by s and the logit range does not move.
func TestRescaledEmbeddingsKeepTheLogitsAndTheRange(t *testing.T) {
	const s, k = 7.0, 10.0
	cfg := Config{Arch: spec.InvertibleL2, Layers: 2, Heads: 2, Width: 4, Context: 4, Vocab: 5, Norm: spec.BallPre, LipC: 0.9,
		Dtype: spec.Float64, Std: 0.5, LipK: k, MLPBlocks: 2}.WithCertifiedRecipe()
	m, err := New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Params() { // move the zero biases and temperatures off their initial values
		if w := p.Value.Data().([]float64); len(w) <= cfg.Context*cfg.Heads {
			for i := range w {
				w[i] += 0.1 * float64(i%3-1)
			}
		}
	}
	m.PowerIterate(500)
	rng := rand.New(rand.NewPCG(3, 4))
	ids := make([]int, cfg.Context)
	for i := range ids {
		ids[i] = rng.IntN(cfg.Vocab)
	}
	before, certBefore := logitsAndCertificate(t, m, ids)

	scaled := cfg
	scaled.LipK = k / s
	r, err := New(scaled, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range m.Params() {
		copy(r.Params()[i].Value.Data().([]float64), p.Value.Data().([]float64))
	}
	mul := func(p *layers.Param, f float64) {
		w := p.Value.Data().([]float64)
		for i := range w {
			w[i] *= f
		}
	}
	add := func(p *layers.Param, a float64) { p.Value.Data().([]float64)[0] += a }
	mul(r.Tok.W, s)
	mul(r.Pos.W, s)
	add(r.Final.(*layers.BallNorm).LogRadius, math.Log(s))
	for _, b := range r.Blocks {
		ib := b.(*layers.InvertibleBlock)
		mul(ib.Attn.WQ, 1/s)
		mul(ib.Attn.WO, s*s)
		for _, mlp := range ib.MLPs {
			add(mlp.LogGain, -math.Log(s))
			mul(mlp.Proj.B, s)
		}
		add(ib.Ball1.LogRadius, math.Log(s))
		add(ib.Ball2.LogRadius, math.Log(s))
	}
	r.PowerIterate(500)
	after, certAfter := logitsAndCertificate(t, r, ids)
	for i := range before {
		if math.Abs(after[i]-before[i]) > 1e-9*(1+math.Abs(before[i])) {
			t.Fatalf("logit %d: %v after rescaling, %v before", i, after[i], before[i])
		}
	}
	if got, want := float64(certAfter.Tok2), float64(certBefore.Tok2)/s; math.Abs(got-want) > 1e-6*want {
		t.Errorf("certified constant %v after rescaling, want %v / %g = %v", got, certBefore.Tok2, s, want)
	}
	if got, want := float64(certAfter.LogitRange), float64(certBefore.LogitRange); math.Abs(got-want) > 1e-6*want {
		t.Errorf("logit range %v after rescaling, want %v", got, want)
	}
}

// logitsAndCertificate returns the logits (T, V) of the text ids under m and m's certificate.
func logitsAndCertificate(t *testing.T, m *Model, ids []int) ([]float64, *Certificate) {
	t.Helper()
	em, err := newEmbeddedMap(m)
	if err != nil {
		t.Fatal(err)
	}
	defer em.vm.Close()
	T, D := m.Cfg.Context, m.Cfg.Width
	tok, pos := m.Tok.Rows(), m.Pos.W.Float64s()
	x := make([]float64, T*D)
	for p, id := range ids {
		for j := range D {
			x[p*D+j] = tok[id*D+j] + pos[p*D+j]
		}
	}
	z, _, err := em.run(x, make([]float64, T*m.Cfg.Vocab))
	if err != nil {
		t.Fatal(err)
	}
	cert, err := m.Certificate()
	if err != nil {
		t.Fatal(err)
	}
	return z, cert
}
