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
