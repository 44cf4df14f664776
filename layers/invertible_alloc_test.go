package layers

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/ops"
	"lipformer/spec"
)

// TestInvertibleBlockStepReusesBuffers: after a warm-up step, a training step of an
// invertible block (one power-iteration step of every spectral normalisation, forward,
// cross-entropy, backward; dropout on) allocates less than one (B*T, hidden) activation,
// at step 2 as at step 20. The step covers what only invertible blocks run: the inf-norm
// bound of contractive L2 attention and its gradients, the contraction and its gradient
// with respect to the bound (active: the bound exceeds c at these weights), spectral
// normalisation and power iteration. Before they kept their buffers a step allocated about
// seven activations at this size (L2; three for the dp control).
func TestInvertibleBlockStepReusesBuffers(t *testing.T) {
	const batch, seqLen, width, heads, hidden = 4, 32, 64, 2, 256
	for _, kind := range []ops.AttentionKind{ops.L2, ops.DotProduct} {
		cfg := spec.Model{Width: width, Heads: heads, Hidden: hidden, Arch: invArch(kind), Dropout: 0.1, Std: 0.02,
			Layers: 1, LipC: 0.9, Context: seqLen}
		blk, err := NewInvertibleBlock("blk", withDtype(cfg, spec.Float32), rng(1))
		if err != nil {
			t.Fatal(err)
		}
		if kind == ops.L2 {
			wq, wv, wo, err := blk.Attn.boundWeights()
			if err != nil {
				t.Fatal(err)
			}
			if s, err := blk.Attn.scale(wq, wv, wo); err != nil || s >= 1 {
				t.Fatalf("contraction factor %g (%v), want < 1 so that the bound's gradient runs", s, err)
			}
		}
		g, err := NewGraph(tensor.Float32, batch, seqLen, true)
		if err != nil {
			t.Fatal(err)
		}
		x := G.NewMatrix(g.G, tensor.Float32, G.WithShape(batch*seqLen, width), G.WithName("x"), G.WithInit(G.Gaussian(0, 1)))
		y, err := blk.Forward(g, x) // (B*T, D)
		if err != nil {
			t.Fatal(err)
		}
		first, later := stepAllocations(t, g, y, func() {
			for _, sn := range blk.SpectralNorms() {
				sn.Iterate(1)
			}
		})
		// The budget: one (B*T, hidden) float32 activation, 128 KiB.
		act := uint64(batch * seqLen * hidden * 4)
		if first > act || later > act {
			t.Errorf("%v: %d bytes allocated at the second step and %d per step later, want under %d", kind, first, later, act)
		}
		t.Logf("%v: %d bytes at the second step, %d per step later (budget %d)", kind, first, later, act)
	}
}
