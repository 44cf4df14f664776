package model

import (
	"math"
	"strings"
	"testing"
)

// TestPairTokensReadTheByteBefore: a model with pair tokens whose row (prev, id) holds the
// byte model's row of id computes the byte model's logits, and one whose row holds the
// byte model's row of prev (byte 0's at a window's first position) computes the byte
// model's logits of the window shifted by one. Together they pin Config.TokenRow as the
// program, the decoder and flow.Embed read it.
func TestPairTokensReadTheByteBefore(t *testing.T) {
	cfg := tiny("dp")
	byteModel, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Pairs = true
	pairModel, err := New(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	bp, pp := byteModel.Params(), pairModel.Params()
	for i := 1; i < len(bp); i++ { // every parameter but the token table
		copy(pp[i].Value.Data().([]float64), bp[i].Value.Data().([]float64))
	}
	V, D, T := cfg.Vocab, cfg.Width, cfg.Context
	byteRows, pairRows := bp[0].Value.Data().([]float64), pp[0].Value.Data().([]float64) // (V, D), (V (V + 1), D)
	window := []int{3, 1, 4, 1, 5}[:T]
	shifted := append([]int{0}, window[:T-1]...)
	for _, c := range []struct {
		name  string
		from  func(prev, id int) int // the byte row that pair row (prev, id) holds
		bytes []int                  // the byte model's window of the same logits
	}{
		{"row of the byte", func(prev, id int) int { return id }, window},
		{"row of the byte before", func(prev, id int) int { return max(prev, 0) }, shifted},
	} {
		for prev := -1; prev < V; prev++ {
			for id := range V {
				r, b := cfg.TokenRow(prev, id), c.from(prev, id)
				copy(pairRows[r*D:(r+1)*D], byteRows[b*D:(b+1)*D])
			}
		}
		want := sampleLogits(t, byteModel, c.bytes)
		got := sampleLogits(t, pairModel, window)
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Fatalf("%s: logit %d (position %d) %g, want the byte model's %g", c.name, i, i/V, got[i], want[i])
			}
		}
		dec, err := pairModel.NewDecoder()
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
					t.Fatalf("%s: decoder logit %d at position %d %g, want %g", c.name, j, p, z[j], want[p*V+j])
				}
			}
		}
	}
}

// sampleLogits are the logits (T, V) of m on one window of ids.
func sampleLogits(t *testing.T, m *Model, ids []int) []float64 {
	t.Helper()
	p := mustProgram(t, m, Sample, 1)
	copy(p.Inputs, ids)
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	var out []float64
	for r := range ids {
		z, err := p.Logits(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, z...)
	}
	return out
}

// TestPairTokensRefuseBytesOutsideTheVocabulary: a pair row of an id outside the vocabulary
// could be another pair's, so the program refuses it by name.
func TestPairTokensRefuseBytesOutsideTheVocabulary(t *testing.T) {
	cfg := tiny("dp")
	cfg.Pairs = true
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
