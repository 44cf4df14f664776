package layers

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/ops"
	"lipformer/spec"
)

// BenchmarkBlockStep times one pre-LN block's forward and backward pass in float32 at
// docs/gorgonia.md's configuration: batch 16, context 128, width 256, 4 heads, MLP 1024, under
// a cross-entropy loss. It reports tokens/s and GFLOP/s counted as 3x the forward pass's
// matrix-product FLOPs; B/op is what a step allocates after the warm-up (every op reuses
// its output, so only Gorgonia's bookkeeping, tens of kB, remains).
//
//	go test -run '^$' -bench BlockStep -benchmem -benchtime 10x ./layers
func BenchmarkBlockStep(b *testing.B) {
	const batch, seqLen, width, heads, hidden = 16, 128, 256, 4, 1024
	for _, kind := range []ops.AttentionKind{ops.DotProduct, ops.L2} {
		b.Run(kind.String(), func(b *testing.B) {
			cfg := spec.Model{Width: width, Heads: heads, Hidden: hidden, Arch: plainArch(kind), Norm: spec.PreLN, Std: 0.02, Layers: 1}
			blk, err := NewBlock("blk", withDtype(cfg, spec.Float32), rng(1))
			if err != nil {
				b.Fatal(err)
			}
			g, err := NewGraph(tensor.Float32, batch, seqLen, true)
			if err != nil {
				b.Fatal(err)
			}
			x := G.NewMatrix(g.G, tensor.Float32, G.WithShape(batch*seqLen, width), G.WithName("x"), G.WithInit(G.Gaussian(0, 1)))
			y, err := blk.Forward(g, x)
			if err != nil {
				b.Fatal(err)
			}
			// The loss is the cross-entropy of y read as logits over a vocabulary of width
			// symbols, as a language model's head would score it.
			targets := make([]int, batch*seqLen) // (B*T) ids in [0, width)
			for i := range targets {
				targets[i] = (i * 7919) % width
			}
			tn := G.NodeFromAny(g.G, tensor.New(tensor.WithShape(len(targets)), tensor.WithBacking(targets)), G.WithName("targets"))
			loss, err := ops.CrossEntropy(y, tn)
			if err != nil {
				b.Fatal(err)
			}
			var wrt G.Nodes
			for _, p := range g.Params() {
				wrt = append(wrt, g.Node(p))
			}
			if _, err := G.Grad(loss, wrt...); err != nil {
				b.Fatal(err)
			}
			m := G.NewTapeMachine(g.G)
			defer m.Close()
			if err := m.RunAll(); err != nil { // warm-up
				b.Fatal(err)
			}
			m.Reset()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := m.RunAll(); err != nil {
					b.Fatal(err)
				}
				m.Reset()
			}
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(float64(batch*seqLen)/sec, "tokens/s")
			b.ReportMetric(3*blockForwardFLOPs(kind, batch, seqLen, width, hidden)/sec/1e9, "GFLOP/s")
		})
	}
}

// blockForwardFLOPs counts the multiply-adds (x2) of a block's matrix products: the
// projections into the packed q, k, v (two blocks for tied L2), the attention logits and
// P V, the output map and the MLP.
func blockForwardFLOPs(kind ops.AttentionKind, batch, seqLen, width, hidden int) float64 {
	n, d, t := float64(batch*seqLen), float64(width), float64(seqLen)
	blocks := 3.0
	if kind == ops.L2 {
		blocks = 2
	}
	proj := 2 * n * d * d * (blocks + 1)
	attn := 2 * 2 * float64(batch) * t * t * d
	mlp := 2 * 2 * n * d * float64(hidden)
	return proj + attn + mlp
}
