package model

import (
	"strings"
	"testing"

	"lipformer/ops"
	"lipformer/spec"
)

// graphBytes is the size of the values of every node of p's graph but its inputs (the
// parameters, buffers, ids and targets), and of what ops keep beside them (ops.Keeper),
// after a run: what the ops keep from run to run.
func graphBytes(t *testing.T, p *Program, size int) float64 {
	t.Helper()
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	var n int
	for _, node := range p.Graph.G.AllNodes() {
		if node.Op() == nil {
			continue
		}
		n += max(1, node.Shape().TotalSize())
		if k, ok := node.Op().(ops.Keeper); ok {
			n += k.Kept()
		}
	}
	return float64(n * size)
}

// weightBytes is the size of m's parameters and buffers.
func weightBytes(m *Model, size int) float64 {
	n := m.NumParams()
	for _, b := range m.Buffers() {
		n += b.Value.Shape().TotalSize()
	}
	return float64(n * size)
}

// TestMemoryCoversTheGraphs: for every variant, in training and evaluation, the estimate
// of the graph's values is at least what the graph holds and at most twice that, and the
// estimate of the weights at least the parameters and buffers and at most twice them. The
// configuration makes both the rows (B*T) and the weights count.
func TestMemoryCoversTheGraphs(t *testing.T) {
	for _, v := range variants() {
		c := v.cfg
		c.Layers, c.Heads, c.Width, c.Hidden, c.Context, c.Vocab = 2, 2, 16, 64, 8, 11
		m, err := New(c, 1)
		if err != nil {
			t.Fatal(err)
		}
		size := 8
		for _, mode := range []Mode{Train, Eval} {
			p := mustProgram(t, m, mode, 3)
			est, err := EstimateMemory(m.Cfg, 3, mode)
			if err != nil {
				t.Fatal(err)
			}
			if got := graphBytes(t, p, size); est.Graph < got || est.Graph > 2*got {
				t.Errorf("%s %v: graph values %.0f bytes, estimated %.0f: want between 1 and 2 times", v.name, mode, got, est.Graph)
			}
			if got := weightBytes(m, size); est.Weights < got || est.Weights > 2*got {
				t.Errorf("%s %v: weights %.0f bytes, estimated %.0f: want between 1 and 2 times", v.name, mode, got, est.Weights)
			}
		}
	}
}

// TestMemoryGrowsWithTheConfiguration: the rows' terms grow in proportion to the batch,
// attention's P with the square of the context, the weights with the square of the width,
// and float64 doubles every part but the runtime's.
func TestMemoryGrowsWithTheConfiguration(t *testing.T) {
	base := Default()
	base.Layers, base.Context, base.Width, base.Heads = 2, 256, 64, 4
	est := func(c Config, batch int) Memory {
		t.Helper()
		m, err := EstimateMemory(c, batch, Train, Eval)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	b1 := est(base, 8)
	b2 := est(base, 16)
	if r := (b2.Graph - b1.Graph) / b1.Graph; r < 0.9 || r > 1 {
		t.Errorf("twice the batch: graph %.3g to %.3g bytes, want nearly twice (the weights' gradients do not grow)", b1.Graph, b2.Graph)
	}
	if r := b2.Attention / b1.Attention; r < 1.5 || r > 2 {
		t.Errorf("twice the batch: attention %.3g to %.3g bytes, want at most twice", b1.Attention, b2.Attention)
	}
	if b2.Weights != b1.Weights || b2.Optimizer != b1.Optimizer {
		t.Errorf("the batch changed the weights or the optimizer: %+v, %+v", b1, b2)
	}
	long := base
	long.Context *= 2
	if r := est(long, 8).Attention / b1.Attention; r < 3.5 || r > 4 {
		t.Errorf("twice the context: attention grew %.2f times, want nearly 4", r)
	}
	wide := base
	wide.Width *= 4
	if r := est(wide, 8).Optimizer / b1.Optimizer; r < 10 || r > 16 {
		t.Errorf("4 times the width: optimizer grew %.2f times, want nearly 16", r)
	}
	f64 := base
	f64.Dtype = spec.Float64
	if d := est(f64, 8); d.Total()-d.Runtime != 2*(b1.Total()-b1.Runtime) {
		t.Errorf("float64: %.4g bytes besides the runtime, want twice float32's %.4g", d.Total()-d.Runtime, b1.Total()-b1.Runtime)
	}
	if _, err := EstimateMemory(base, 0, Train); err == nil || !strings.Contains(err.Error(), "batch 0") {
		t.Errorf("batch 0: error %v, want one naming the batch", err)
	}
}

// TestMemoryOfTheHugeConfigurations: the configurations that exhausted the memory of a
// machine are estimated far above it (they are refused before they allocate).
func TestMemoryOfTheHugeConfigurations(t *testing.T) {
	small := Default()
	small.Layers, small.Width, small.Heads = 1, 32, 4
	for _, c := range []struct {
		name  string
		cfg   func() Config
		batch int
	}{
		{"batch 100000", func() Config { return small }, 100000},
		{"ctx 100000", func() Config { c := small; c.Context = 100000; return c }, 12},
		{"width 1000000", func() Config { c := Default(); c.Width = 1000000; return c }, 12},
	} {
		m, err := EstimateMemory(c.cfg(), c.batch, Train, Eval)
		if err != nil {
			t.Fatal(err)
		}
		if m.Total() < 10e9 {
			t.Errorf("%s: estimated %s, want more than 10 GB", c.name, m)
		}
	}
}

func TestBytes(t *testing.T) {
	for b, want := range map[float64]string{0: "0 B", 999: "999 B", 1500: "1.5 kB", 13.5e9: "13.5 GB", 2e18: "2000.0 PB"} {
		if got := Bytes(b); got != want {
			t.Errorf("Bytes(%g) = %q, want %q", b, got, want)
		}
	}
}
