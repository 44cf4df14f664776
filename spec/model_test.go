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
