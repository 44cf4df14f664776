package layers

import (
	"runtime"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/ops"
	"lipformer/spec"
)

// TestBlockStepReusesBuffers: after a warm-up step, a training step of a block (forward,
// cross-entropy, backward; dropout on) allocates far less than its activations occupy,
// and as little at step 20 as at step 2: every op writes into the buffer of the step
// before, and nothing accumulates.
func TestBlockStepReusesBuffers(t *testing.T) {
	const batch, seqLen, width, heads, hidden = 4, 32, 64, 2, 256
	for _, kind := range []ops.AttentionKind{ops.DotProduct, ops.L2} {
		cfg := spec.Model{Width: width, Heads: heads, Hidden: hidden, Arch: plainArch(kind), Norm: spec.PreLN, Dropout: 0.1, Std: 0.02, Layers: 1}
		blk, err := NewBlock("blk", withDtype(cfg, spec.Float32), rng(1))
		if err != nil {
			t.Fatal(err)
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
		first, later := stepAllocations(t, g, y, nil)
		// One (B*T, hidden) activation: a step that reallocated its outputs would allocate
		// more than ten of these.
		act := uint64(batch * seqLen * hidden * 4)
		if first > act || later > act {
			t.Errorf("%v: %d bytes allocated at the second step and %d per step later, want under %d", kind, first, later, act)
		}
	}
}

// stepAllocations builds a training step on the block output y (B*T, D) of graph g:
// cross-entropy against fixed targets, the gradient of every parameter, a tape machine;
// it runs one warm-up step and returns the bytes allocated by the second step and per
// step over the next 20. prepare, if not nil, runs before each step.
func stepAllocations(t *testing.T, g *Graph, y *G.Node, prepare func()) (first, later uint64) {
	t.Helper()
	targets := make([]int, y.Shape()[0]) // (B*T)
	for i := range targets {
		targets[i] = i % y.Shape()[1]
	}
	loss, err := ops.CrossEntropy(y, G.NodeFromAny(g.G, tensor.New(tensor.WithShape(len(targets)), tensor.WithBacking(targets)), G.WithName("t")))
	if err != nil {
		t.Fatal(err)
	}
	var wrt G.Nodes
	for _, p := range g.Params() {
		wrt = append(wrt, g.Node(p))
	}
	if _, err := G.Grad(loss, wrt...); err != nil {
		t.Fatal(err)
	}
	m := G.NewTapeMachine(g.G)
	defer m.Close()
	step := func(i int) {
		if prepare != nil {
			prepare()
		}
		g.Resample(1, i)
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		m.Reset()
	}
	step(0)
	perStep := func(steps int) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := 0; i < steps; i++ {
			step(i + 1)
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / uint64(steps)
	}
	return perStep(1), perStep(20)
}
