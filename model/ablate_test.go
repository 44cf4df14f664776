package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/layers"
	"lipformer/ops"
	"lipformer/spec"
)

// ablationVariants are the tiny configurations of every architecture, and of dp and l2
// without LayerNorm and with post-LN.
func ablationVariants() []variant {
	var vs []variant
	for _, arch := range archNames() {
		vs = append(vs, variant{arch, tiny(arch)})
	}
	for _, arch := range []string{"dp", "l2"} {
		for _, norm := range []spec.Norm{spec.NoLN, spec.PostLN} {
			c := tiny(arch)
			c.Norm = norm
			vs = append(vs, variant{arch + "-" + norm.String(), c})
		}
	}
	return vs
}

// evalLoss is the evaluation loss of a new program of m on the batch of seed.
func evalLoss(t *testing.T, m *Model, seed uint64) float64 {
	t.Helper()
	p := mustProgram(t, m, Eval, 2)
	fill(p, seed, m.Cfg.Vocab)
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	return mustLoss(t, p)
}

// ablatedLoss is evalLoss with the attention of the given layers off.
func ablatedLoss(t *testing.T, m *Model, off []int, seed uint64) float64 {
	t.Helper()
	restore, err := m.SetAttentionOff(off)
	if err != nil {
		t.Fatal(err)
	}
	defer restore()
	return evalLoss(t, m, seed)
}

func allLayers(m *Model) []int {
	l := make([]int, m.Cfg.Layers)
	for i := range l {
		l[i] = i
	}
	return l
}

// TestAttentionOffIsAZeroOutputMap: for the architectures whose attention ends in W^O with no
// bias (dp, l2, l2-untied) and norms pre and none, removing the attention of one layer, or
// of all, gives the loss of a copy of the model whose W^O of those layers is zero. (Post-LN
// would give LN(x) for x; contractive attention has no scale min(1, c/UB) at W^O = 0, where
// its bound UB is 0.)
func TestAttentionOffIsAZeroOutputMap(t *testing.T) {
	for _, v := range ablationVariants() {
		if v.cfg.Arch.Invertible() || v.cfg.Arch == spec.ContractiveL2 || v.cfg.Norm == spec.PostLN {
			continue
		}
		t.Run(v.name, func(t *testing.T) {
			m, err := New(v.cfg, 4)
			if err != nil {
				t.Fatal(err)
			}
			sets := [][]int{allLayers(m)}
			for l := range v.cfg.Layers {
				sets = append(sets, []int{l})
			}
			for _, off := range sets {
				zeroed, err := New(v.cfg, 4)
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range off {
					clear(zeroed.Blocks[l].Attention().WO.Value.Data().([]float64))
				}
				got, want := ablatedLoss(t, m, off, 6), evalLoss(t, zeroed, 6)
				if d := math.Abs(got - want); d > 1e-12 || math.IsNaN(got) {
					t.Errorf("attention of %v off: loss %.15g, with W^O = 0 %.15g", off, got, want)
				}
				if intact := evalLoss(t, m, 6); math.Abs(intact-got) < 1e-6 {
					t.Errorf("attention of %v off: loss %.15g, intact %.15g: nothing was removed", off, got, intact)
				}
			}
		})
	}
}

// TestAttentionOffIsTheMLPNetwork: with all attention off, every architecture's evaluation
// loss is that of the network built here by hand from the embeddings, each block's MLP
// sub-block (with its LayerNorm placed per the config), the final LayerNorm and the head.
func TestAttentionOffIsTheMLPNetwork(t *testing.T) {
	for _, v := range ablationVariants() {
		t.Run(v.name, func(t *testing.T) {
			m, err := New(v.cfg, 5)
			if err != nil {
				t.Fatal(err)
			}
			got, want := ablatedLoss(t, m, allLayers(m), 8), mlpOnlyLoss(t, m, 8)
			if d := math.Abs(got - want); d > 1e-12 || math.IsNaN(got) {
				t.Errorf("all attention off: loss %.15g, MLP-only network %.15g", got, want)
			}
		})
	}
}

// mlpOnlyLoss is the loss of m without its attention sub-blocks on the batch of seed,
// computed by a graph of the MLP sub-blocks alone.
func mlpOnlyLoss(t *testing.T, m *Model, seed uint64) float64 {
	t.Helper()
	ref := mustProgram(t, m, Eval, 2) // for the batch's inputs and targets
	fill(ref, seed, m.Cfg.Vocab)
	g, err := layers.NewGraph(tensor.Float64, 2, m.Cfg.Context, false)
	if err != nil {
		t.Fatal(err)
	}
	n := len(ref.Inputs)
	node := func(name string, v []int) *G.Node {
		return G.NodeFromAny(g.G, tensor.New(tensor.WithShape(n), tensor.WithBacking(slices.Clone(v))), G.WithName(name))
	}
	must := func(x *G.Node, err error) *G.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	x := must(G.Add(must(m.Tok.Forward(g, node("ids", ref.Inputs))), must(m.Pos.Positions(g))))
	for _, b := range m.Blocks {
		switch b := b.(type) {
		case *layers.Block:
			in := x
			if b.Norm == spec.PreLN {
				in = must(b.LN2.Forward(g, x))
			}
			x = must(ops.Add(x, must(b.MLP.Forward(g, in))))
			if b.Norm == spec.PostLN {
				x = must(b.LN2.Forward(g, x))
			}
		case *layers.InvertibleBlock:
			for _, mlp := range b.MLPs {
				x = must(ops.Add(x, must(mlp.Forward(g, x))))
			}
		}
	}
	x = must(m.Final.Forward(g, x))
	var logits *G.Node
	if m.Head == nil {
		logits = must(m.Tok.Unembed(g, x))
	} else {
		logits = must(m.Head.Forward(g, x))
	}
	loss := must(ops.CrossEntropy(logits, node("targets", ref.Targets)))
	vm := G.NewTapeMachine(g.G)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	return loss.Value().Data().(float64)
}

// TestAttentionOffIgnoresAttentionWeights: with all attention off, perturbing every
// attention weight leaves the loss unchanged, while it changes the intact model's.
func TestAttentionOffIgnoresAttentionWeights(t *testing.T) {
	for _, v := range ablationVariants() {
		t.Run(v.name, func(t *testing.T) {
			m, err := New(v.cfg, 6)
			if err != nil {
				t.Fatal(err)
			}
			off0, intact0 := ablatedLoss(t, m, allLayers(m), 3), evalLoss(t, m, 3)
			r := rand.New(rand.NewPCG(7, 7))
			for _, a := range m.Attentions() {
				for _, p := range a.Params() {
					w := p.Value.Data().([]float64)
					for i := range w {
						w[i] += 0.5 * r.NormFloat64()
					}
				}
			}
			off1, intact1 := ablatedLoss(t, m, allLayers(m), 3), evalLoss(t, m, 3)
			if off1 != off0 {
				t.Errorf("all attention off: loss %.15g, %.15g after perturbing the attention weights", off0, off1)
			}
			if math.Abs(intact1-intact0) < 1e-6 {
				t.Errorf("intact: loss %.15g, %.15g after perturbing the attention weights: the test perturbs nothing", intact0, intact1)
			}
		})
	}
}

// TestAttentionOffNoneAndRestore: removing no layer gives exactly the evaluation loss, and
// so does a program compiled after restore, or compiled before the ablation; AttentionOff
// reports the layers removed.
func TestAttentionOffNoneAndRestore(t *testing.T) {
	for _, arch := range []string{"dp", "invertible-l2"} {
		m, err := New(tiny(arch), 2)
		if err != nil {
			t.Fatal(err)
		}
		want := evalLoss(t, m, 1)
		if got := ablatedLoss(t, m, nil, 1); got != want {
			t.Errorf("%s: no layer removed: loss %.15g, evaluation %.15g", arch, got, want)
		}
		before := mustProgram(t, m, Eval, 2)
		fill(before, 1, m.Cfg.Vocab)
		restore, err := m.SetAttentionOff([]int{1})
		if err != nil {
			t.Fatal(err)
		}
		if got := m.AttentionOff(); !slices.Equal(got, []int{1}) {
			t.Errorf("%s: AttentionOff %v, want [1]", arch, got)
		}
		if err := before.Run(); err != nil {
			t.Fatal(err)
		}
		if got := mustLoss(t, before); got != want {
			t.Errorf("%s: a program compiled before the ablation: loss %.15g, want %.15g", arch, got, want)
		}
		if _, err := m.NewDecoder(); err == nil || !strings.Contains(err.Error(), "[1]") {
			t.Errorf("%s: decoder of a model with attention off: error %v, want one naming layer 1", arch, err)
		}
		restore()
		if got := m.AttentionOff(); len(got) != 0 {
			t.Errorf("%s: after restore AttentionOff is %v", arch, got)
		}
		if got := evalLoss(t, m, 1); got != want {
			t.Errorf("%s: after restore: loss %.15g, want %.15g", arch, got, want)
		}
		if _, err := m.NewDecoder(); err != nil {
			t.Errorf("%s: decoder after restore: %v", arch, err)
		}
	}
}

func TestSetAttentionOffRejectsBadLayers(t *testing.T) {
	m, err := New(tiny("l2"), 1) // 2 layers
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		off  []int
		name string
	}{{[]int{-1}, "-1"}, {[]int{0, 2}, "2"}, {[]int{1, 1}, "1"}} {
		_, err := m.SetAttentionOff(c.off)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("layer %s", c.name)) {
			t.Errorf("%v: error %v, want one naming layer %s", c.off, err, c.name)
		}
		if got := m.AttentionOff(); len(got) != 0 {
			t.Errorf("%v rejected, yet the attention of %v is off", c.off, got)
		}
	}
}
