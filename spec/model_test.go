package spec

import (
	"math"
	"strings"
	"testing"

	"lipformer/ops"
)

// TestEmbedRadiusNeedsABound: embed_radius is refused, naming the field, without lip_k and
// when negative or not finite, and accepted with lip_k.
func TestEmbedRadiusNeedsABound(t *testing.T) {
	base := Model{Arch: InvertibleL2, Layers: 1, Heads: 1, Width: 4, Context: 4, Vocab: 5, Norm: NoLN, LipC: 0.5, Dtype: Float32, Std: 0.02, L2Bound: ops.BoundTok2}
	for _, c := range []struct {
		k, r float64
		ok   bool
	}{{0, 1, false}, {10, -1, false}, {10, math.Inf(1), false}, {10, math.NaN(), false}, {10, 1, true}, {10, 0, true}} {
		m := base
		m.LipK, m.EmbedRadius = c.k, c.r
		err := m.Validate()
		if c.ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), "embed_radius")) {
			t.Errorf("lip_k %g, embed_radius %g: %v", c.k, c.r, err)
		}
	}
}

// TestLipKArchitectures: lip_k is accepted for invertible-l2 under the token2 bound with
// an untied head, with or without ball norms before the branches, and refused for
// contractive-l2 with a message that names its certified form.
func TestLipKArchitectures(t *testing.T) {
	base := Model{Arch: InvertibleL2, Layers: 1, Heads: 1, Width: 4, Context: 4, Vocab: 5, Norm: NoLN, LipC: 0.5, Dtype: Float32, Std: 0.02, L2Bound: ops.BoundTok2, LipK: 10}
	ball := base
	ball.Norm = BallPre
	for _, m := range []Model{base, ball} {
		if err := m.Validate(); err != nil {
			t.Errorf("norm %v: %v", m.Norm, err)
		}
	}
	c := base
	c.Arch, c.Norm = ContractiveL2, PreLN
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "invertible-l2 with norm ball") {
		t.Errorf("contractive-l2 with lip_k: %v, want an error naming invertible-l2 with norm ball", err)
	}
}

// TestMixRangeAndHeadGain: mix is refused, naming the field, below 0 and beyond the
// context, and accepted for every architecture up to the context; a mixing sub-block is
// one more sub-block of each layer, so a model bounded by K pays 1 + c for it in the head.
func TestMixRangeAndHeadGain(t *testing.T) {
	base := Model{Arch: InvertibleL2, Layers: 2, Heads: 1, Width: 4, Context: 4, Vocab: 5, Norm: NoLN, LipC: 0.5, Dtype: Float32, Std: 0.02, L2Bound: ops.BoundTok2, LipK: 10}
	for _, c := range []struct {
		arch Arch
		mix  int
		ok   bool
	}{{InvertibleL2, -1, false}, {InvertibleL2, 5, false}, {InvertibleL2, 4, true}, {InvertibleL2, 1, true}, {DP, 3, true}, {ContractiveL2, 2, true}} {
		m := base
		m.Arch, m.Mix = c.arch, c.mix
		if c.arch != InvertibleL2 {
			m.Norm, m.LipK = PreLN, 0
		}
		err := m.Validate()
		if c.ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), "mix")) {
			t.Errorf("arch %v, mix %d: %v", c.arch, c.mix, err)
		}
	}
	m := base
	m.Mix = 3
	if m.SubBlocks() != 6 || math.Abs(m.HeadGain()-10/math.Pow(1.5, 6)) > 1e-12 {
		t.Errorf("mix 3: %d sub-blocks and head gain %v, want 6 and %v", m.SubBlocks(), m.HeadGain(), 10/math.Pow(1.5, 6))
	}
}

// TestActivation: maxmin is accepted for invertible blocks of even hidden width and read
// back by MLPActivation; an unknown name, maxmin for a non-invertible architecture and an
// odd hidden width are refused, naming the problem.
func TestActivation(t *testing.T) {
	base := Model{Arch: InvertibleL2, Layers: 1, Heads: 1, Width: 4, Context: 4, Vocab: 5, Norm: NoLN, LipC: 0.5, Dtype: Float32, Std: 0.02, Activation: "maxmin"}
	if err := base.Validate(); err != nil || base.MLPActivation() != ops.ActMaxMin {
		t.Fatalf("maxmin: %v, activation %v", err, base.MLPActivation())
	}
	if (Model{}).MLPActivation() != ops.ActELU {
		t.Error("the default activation is not ELU")
	}
	for want, m := range map[string]Model{
		`activation "relu"`: func() Model { m := base; m.Activation = "relu"; return m }(),
		"contractive-l2":    func() Model { m := base; m.Arch, m.Norm = ContractiveL2, PreLN; return m }(),
		"hidden width 7":    func() Model { m := base; m.Hidden = 7; return m }(),
	} {
		if err := m.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming it", want, err)
		}
	}
}

// TestTokenBytes: n-byte tokens give the table (V + 1)^(n-1) V rows, the first V those of
// a window's first position, each window of bytes its own row; a tied head, which reads the
// table as V columns, a count beyond the context and a table beyond MaxTokenTable are
// refused by name.
func TestTokenBytes(t *testing.T) {
	m := Model{Arch: DP, Layers: 1, Heads: 1, Width: 4, Context: 4, Vocab: 5, Norm: PreLN, Dtype: Float32, Std: 0.02}
	for n, rows := range map[int]int{0: 5, 1: 5, 2: 30, 3: 180, 4: 1080} {
		m.TokenBytes = n
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		if m.TokenRows() != rows {
			t.Errorf("%d token bytes: %d rows, want %d", n, m.TokenRows(), rows)
		}
		seen := make(map[int]bool)
		for w := range 625 { // every window of 4 bytes
			window := []int{w / 125 % 5, w / 25 % 5, w / 5 % 5, w % 5}
			for p := range window {
				r := m.TokenRow(window, p)
				if r < 0 || r >= rows || (n > 1 && (p == 0) != (r < m.Vocab)) {
					t.Fatalf("%d token bytes, window %v, position %d: row %d", n, window, p, r)
				}
			}
			seen[m.TokenRow(window, 3)] = true
		}
		if want := int(math.Pow(5, float64(max(n, 1)))); len(seen) != want {
			t.Errorf("%d token bytes: the last position's rows take %d values over all windows, want one per last %d bytes, %d", n, len(seen), max(n, 1), want)
		}
	}
	for want, c := range map[string]Model{
		"token_bytes 3 with tie":       func() Model { c := m; c.TokenBytes, c.Tie = 3, true; return c }(),
		"token_bytes 5 with context 4": func() Model { c := m; c.TokenBytes = 5; return c }(),
		"exceeds 134217728 values":     func() Model { c := m; c.TokenBytes, c.Vocab, c.Width, c.Context = 4, 256, 128, 8; return c }(),
	} {
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming it", want, err)
		}
	}
}
