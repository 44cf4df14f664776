package layers

import (
	"fmt"
	"testing"

	"lipformer/internal/gradcheck"
	"lipformer/lipschitz"
	"lipformer/ops"
	"lipformer/spec"
)

// testInvertible is an invertible block of width 6 (2 heads, hidden 12, context 4) with
// nonzero biases and weights large enough for the contractive scale to act.
func testInvertible(t *testing.T, kind ops.AttentionKind) *InvertibleBlock {
	t.Helper()
	cfg := spec.Model{Width: 6, Heads: 2, Hidden: 12, Arch: invArch(kind), Std: 0.6, Layers: 1, LipC: 0.9, Context: 4}
	b, err := NewInvertibleBlock("inv", withDtype(cfg, spec.Float64), rng(9))
	if err != nil {
		t.Fatal(err)
	}
	b.MLP.Fc.B.fillNormal(rng(10), 0.3)
	b.MLP.Proj.B.fillNormal(rng(11), 0.3)
	return b
}

// TestInvertibleBlockMatchesReference: x + A(x) then + M(x), with A the plain-Go attention
// times min(1, c / UB_inf) for L2 and times c / (sigma_V sigma_O) for dp.
func TestInvertibleBlockMatchesReference(t *testing.T) {
	for _, kind := range []ops.AttentionKind{ops.L2, ops.DotProduct} {
		b := testInvertible(t, kind)
		var scale float64
		if kind == ops.L2 {
			wq, wv, wo, err := b.Attn.boundWeights()
			if err != nil {
				t.Fatal(err)
			}
			ub, err := lipschitz.L2MHABoundInf(4, wq, wv, wo)
			if err != nil {
				t.Fatal(err)
			}
			if scale = 0.9 / ub; scale >= 1 {
				t.Fatalf("bound %g: want weights whose contractive scale acts", ub)
			}
		} else {
			scale = 0.9 / (sigmaRef(b.VNorm) * sigmaRef(b.ONorm))
		}
		x := gradcheck.Rand(5, 1, 2*4, 6)
		h := rowsOf(x)
		for i, r := range refAttention(t, b.Attn, h, 4) {
			for j := range r {
				h[i][j] += scale * r[j]
			}
		}
		for i, r := range spectralMLPRef(t, b.MLP, h) {
			for j := range r {
				h[i][j] += r[j]
			}
		}
		assertRows(t, fmt.Sprintf("invertible %v", kind), forward(t, x, 2, 4, b.Forward), h, 1e-12)
	}
}

func TestInvertibleBlockGradient(t *testing.T) {
	for _, kind := range []ops.AttentionKind{ops.L2, ops.DotProduct} {
		b := testInvertible(t, kind)
		checkGrad(t, fmt.Sprintf("invertible %v", kind), b.Params(), gradcheck.Rand(5, 1, 2*4, 6), 2, 4, b.Forward)
	}
}

// TestInvertibleBlockRejectsBadConfigs: a plain architecture, c outside (0, 1), no
// context, and a ball norm under the kim bound are refused.
func TestInvertibleBlockRejectsBadConfigs(t *testing.T) {
	for _, cfg := range []spec.Model{
		{Width: 6, Heads: 2, Hidden: 12, Arch: spec.L2Untied, LipC: 0.9, Context: 4, Std: 1},
		{Width: 6, Heads: 2, Hidden: 12, Arch: spec.ContractiveL2, LipC: 0.9, Context: 4, Std: 1},
		{Width: 6, Heads: 2, Hidden: 12, Arch: spec.InvertibleL2, LipC: 1, Context: 4, Std: 1},
		{Width: 6, Heads: 2, Hidden: 12, Arch: spec.InvertibleL2, LipC: 0.9, Std: 1},
		{Width: 6, Heads: 2, Hidden: 12, Arch: spec.InvertibleL2, LipC: 0.9, Context: 4, Std: 1, Norm: spec.BallPre, BallRadius: 1, L2Bound: ops.BoundKim},
	} {
		if _, err := NewInvertibleBlock("inv", withDtype(cfg, spec.Float64), rng(1)); err == nil {
			t.Errorf("%+v was accepted", cfg)
		}
	}
}
