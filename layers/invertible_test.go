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
// the given number of MLP sub-blocks, nonzero biases and weights large enough for the
// contractive scale to act.
func testInvertible(t *testing.T, kind ops.AttentionKind, mlps int) *InvertibleBlock {
	t.Helper()
	cfg := spec.Model{Width: 6, Heads: 2, Hidden: 12, Arch: invArch(kind), Std: 0.6, Layers: 1, LipC: 0.9, Context: 4, MLPBlocks: mlps}
	b, err := NewInvertibleBlock("inv", withDtype(cfg, spec.Float64), rng(9))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.MLPs) != max(mlps, 1) {
		t.Fatalf("%d MLP branches for mlp_blocks %d", len(b.MLPs), mlps)
	}
	for k, mlp := range b.MLPs {
		mlp.Fc.B.fillNormal(rng(uint64(10+2*k)), 0.3)
		mlp.Proj.B.fillNormal(rng(uint64(11+2*k)), 0.3)
	}
	return b
}

// TestInvertibleBlockMatchesReference: x + A(x) then + M_k(x) for each MLP branch in turn,
// with A the plain-Go attention times min(1, c / UB_inf) for L2 and times
// c / (sigma_V sigma_O) for dp; with one and with three MLP sub-blocks.
func TestInvertibleBlockMatchesReference(t *testing.T) {
	for _, c := range []struct {
		kind ops.AttentionKind
		mlps int
	}{{ops.L2, 0}, {ops.DotProduct, 0}, {ops.L2, 3}} {
		kind, b := c.kind, testInvertible(t, c.kind, c.mlps)
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
		for _, mlp := range b.MLPs {
			for i, r := range spectralMLPRef(t, mlp, h) {
				for j := range r {
					h[i][j] += r[j]
				}
			}
		}
		assertRows(t, fmt.Sprintf("invertible %v, %d MLPs", kind, len(b.MLPs)), forward(t, x, 2, 4, b.Forward), h, 1e-12)
	}
}

func TestInvertibleBlockGradient(t *testing.T) {
	for _, c := range []struct {
		kind ops.AttentionKind
		mlps int
	}{{ops.L2, 0}, {ops.DotProduct, 0}, {ops.L2, 2}} {
		b := testInvertible(t, c.kind, c.mlps)
		checkGrad(t, fmt.Sprintf("invertible %v, %d MLPs", c.kind, len(b.MLPs)), b.Params(), gradcheck.Rand(5, 1, 2*4, 6), 2, 4, b.Forward)
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
