package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestBlockNormIsTheJacobianBlocks: the power iteration of LowerBound finds the spectral
// norm of each block J_ji of the exact Jacobian of the embedded map, for a plain, a
// contractive and an invertible model bounded end to end.
func TestBlockNormIsTheJacobianBlocks(t *testing.T) {
	for _, cfg := range []Config{tiny("l2"), tiny("contractive-l2").WithCertifiedRecipe(), withLipK(tiny("invertible-l2").WithCertifiedRecipe(), 10)} {
		m, err := New(cfg, 2)
		if err != nil {
			t.Fatal(err)
		}
		em, err := newEmbeddedMap(m)
		if err != nil {
			t.Fatal(err)
		}
		T, D, V := cfg.Context, cfg.Width, cfg.Vocab
		rng := rand.New(rand.NewPCG(5, 6))
		x := make([]float64, T*D)
		for k := range x {
			x[k] = rng.NormFloat64()
		}
		jac := networkJacobian(t, m)(x) // (T*V, T*D)
		for _, ji := range [][2]int{{0, 0}, {T - 1, T - 1}, {T - 1, 0}, {2, 1}} {
			j, i := ji[0], ji[1]
			block := mat.DenseCopyOf(jac.Slice(j*V, (j+1)*V, i*D, (i+1)*D))
			var svd mat.SVD
			if !svd.Factorize(block, mat.SVDNone) {
				t.Fatal("svd failed")
			}
			want := svd.Values(nil)[0]
			got, err := em.blockNorm(x, j, i, 200, rng)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-want) > 1e-5*math.Max(want, 1e-3) {
				t.Errorf("%v block (%d, %d): power iteration %v, SVD %v", cfg.Arch, j, i, got, want)
			}
		}
		em.vm.Close()
	}
}

// TestLowerBoundBelowTheCertificate: the searched lower bound of every Lipschitz variant
// is positive and at most its certificate in the token norm, and it is the largest of the
// blocks it reports, each positive (position j's logits move with every token i <= j).
func TestLowerBoundBelowTheCertificate(t *testing.T) {
	for _, v := range variants() {
		if !v.cfg.Arch.TiedL2() {
			continue
		}
		m, err := New(v.cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		m.PowerIterate(200)
		cert, err := m.Certificate()
		if err != nil {
			t.Fatal(err)
		}
		low, err := m.LowerBound(2, 30, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !(low.Best > 0) || low.Best > float64(cert.Tok2) {
			t.Errorf("%s: lower bound %v, certificate %v", v.name, low.Best, cert.Tok2)
		}
		var best float64
		for _, b := range low.Blocks {
			if !(b.Best > 0) || b.Row < b.Col {
				t.Errorf("%s: block %+v, want a positive norm at j >= i", v.name, b)
			}
			best = max(best, b.Best)
		}
		if n := len(low.Blocks); n != 7 || best != low.Best {
			t.Errorf("%s: %d blocks whose largest is %v, want 7 and the lower bound %v", v.name, n, best, low.Best)
		}
	}
}

// withLipK is c bounded end to end by k.
func withLipK(c Config, k float64) Config {
	c.LipK = k
	return c
}
