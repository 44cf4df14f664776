package model

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestTokenBytesReadTheBytesBefore: for pairs and triples, a model whose row of a byte
// and the bytes before it holds the byte model's row of the byte computes the byte model's
// logits, and one whose row holds the byte model's row of the oldest byte before (byte 0's
// before the window) computes the byte model's logits of the window shifted by n - 1.
// Together they pin Config.TokenRow as the program, the decoder and flow.Embed read it.
func TestTokenBytesReadTheBytesBefore(t *testing.T) {
	for _, n := range []int{2, 3} {
		cfg := tiny("dp")
		byteModel, err := New(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		cfg.TokenBytes = n
		nModel, err := New(cfg, 2)
		if err != nil {
			t.Fatal(err)
		}
		bp, np := byteModel.Params(), nModel.Params()
		for i := 1; i < len(bp); i++ { // every parameter but the token table
			copy(np[i].Value.Data().([]float64), bp[i].Value.Data().([]float64))
		}
		V, D, T := cfg.Vocab, cfg.Width, cfg.Context
		byteRows, nRows := bp[0].Value.Data().([]float64), np[0].Value.Data().([]float64) // (V, D), (TokenRows, D)
		window := []int{3, 1, 4, 1, 5}[:T]
		shifted := append(make([]int, n-1), window[:T-n+1]...)
		for _, c := range []struct {
			name  string
			from  func(id, oldest int) int // the byte row that a row holds, from its byte and oldest digit
			bytes []int                    // the byte model's window of the same logits
		}{
			{"row of the byte", func(id, oldest int) int { return id }, window},
			{"row of the oldest byte before", func(id, oldest int) int { return max(oldest-1, 0) }, shifted},
		} {
			for r := range cfg.TokenRows() {
				oldest := r / V
				for range n - 2 {
					oldest /= V + 1
				}
				b := c.from(r%V, oldest)
				copy(nRows[r*D:(r+1)*D], byteRows[b*D:(b+1)*D])
			}
			want := sampleLogits(t, byteModel, c.bytes)
			got := sampleLogits(t, nModel, window)
			for i := range want {
				if math.Abs(got[i]-want[i]) > 1e-12 {
					t.Fatalf("%d bytes, %s: logit %d (position %d) %g, want the byte model's %g", n, c.name, i, i/V, got[i], want[i])
				}
			}
			dec, err := nModel.NewDecoder()
			if err != nil {
				t.Fatal(err)
			}
			for p, id := range window {
				var z []float64
				if p == 0 {
					z, err = dec.Prefill(window[:1])
				} else {
					z, err = dec.Step(id)
				}
				if err != nil {
					t.Fatal(err)
				}
				for j := range z {
					if math.Abs(z[j]-want[p*V+j]) > 1e-9 {
						t.Fatalf("%d bytes, %s: decoder logit %d at position %d %g, want %g", n, c.name, j, p, z[j], want[p*V+j])
					}
				}
			}
		}
	}
}

// sampleLogits are the logits (T, V) of m on one window of ids, run as the second of a
// batch of two whose first window is ids reversed, so that a row that read across the
// windows' boundary would show.
func sampleLogits(t *testing.T, m *Model, ids []int) []float64 {
	t.Helper()
	p := mustProgram(t, m, Sample, 2)
	rev := slices.Clone(ids)
	slices.Reverse(rev)
	copy(p.Inputs, rev)
	copy(p.Inputs[len(ids):], ids)
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	var out []float64
	for r := range ids {
		z, err := p.Logits(len(ids) + r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, z...)
	}
	return out
}

// TestTokenBytesRefuseBytesOutsideTheVocabulary: a row of an id outside the vocabulary
// could be another's, so the program refuses it by name.
func TestTokenBytesRefuseBytesOutsideTheVocabulary(t *testing.T) {
	cfg := tiny("dp")
	cfg.TokenBytes = 2
	m, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := mustProgram(t, m, Sample, 1)
	p.Inputs[2] = cfg.Vocab
	if err := p.Run(); err == nil || !strings.Contains(err.Error(), "token id 7 at row 2") {
		t.Errorf("run with token %d: %v, want an error naming it and its row", cfg.Vocab, err)
	}
}

// TestLargeTablesBoundTheirDiameter: a table of more than exactRows rows reports twice its
// ball's radius as the diameter, says so in the certificate, and that bound is above every
// distance between two rows; a smaller table reports its searched diameter.
func TestLargeTablesBoundTheirDiameter(t *testing.T) {
	for _, c := range []struct {
		vocab int
		bound bool
	}{{7, false}, {20, true}} {
		cfg := tiny("invertible-l2")
		cfg.Vocab, cfg.TokenBytes, cfg.LipK = c.vocab, 3, 10
		cfg = cfg.WithCertifiedRecipe()
		m, err := New(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := m.Certificate()
		if err != nil {
			t.Fatal(err)
		}
		if cert.DiameterBound != c.bound || (cfg.TokenRows() > exactRows) != c.bound {
			t.Fatalf("vocab %d, %d rows: diameter bound %t, want %t", c.vocab, cfg.TokenRows(), cert.DiameterBound, c.bound)
		}
		_, r := m.TokenBall()
		if c.bound && cert.TokenDiameter != 2*r {
			t.Errorf("vocab %d: diameter %g, want the bound 2 x %g", c.vocab, cert.TokenDiameter, r)
		}
		if c.bound != strings.Contains(cert.Diameter(), "bound") {
			t.Errorf("vocab %d: the reports call it %q", c.vocab, cert.Diameter())
		}
		e, D := m.Tok.Rows(), cfg.Width
		for a := 0; a < cfg.TokenRows(); a += 97 {
			for b := a + 1; b < cfg.TokenRows(); b += 89 {
				var s float64
				for k := range D {
					d := e[a*D+k] - e[b*D+k]
					s += d * d
				}
				if math.Sqrt(s) > cert.TokenDiameter*(1+1e-12) {
					t.Fatalf("vocab %d: rows %d and %d are %g apart, above the diameter %g", c.vocab, a, b, math.Sqrt(s), cert.TokenDiameter)
				}
			}
		}
	}
}
