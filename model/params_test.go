package model

import (
	"slices"
	"strings"
	"testing"

	"lipformer/layers"
)

// TestParamsAreTheTrainingGraphs: for every variant, the model's one parameter list is
// exactly what its training graph uses, in the order it first uses them (the order the
// gradient norm sums in), each parameter once, and the parameter count and the checkpoint
// are that list.
func TestParamsAreTheTrainingGraphs(t *testing.T) {
	for _, v := range variants() {
		m, err := New(v.cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.NewProgram(Train, 2)
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		ps := m.Params()
		if !slices.Equal(p.Graph.Params(), ps) || !slices.Equal(p.Params(), ps) {
			t.Errorf("%s: the graph uses %s, the model lists %s", v.name, paramNames(p.Graph.Params()), paramNames(ps))
		}
		seen, n := map[*layers.Param]bool{}, 0
		for _, q := range ps {
			if seen[q] {
				t.Errorf("%s: %s listed twice", v.name, q.Name)
			}
			seen[q] = true
			n += q.Value.Shape().TotalSize()
		}
		if m.NumParams() != n {
			t.Errorf("%s: NumParams %d, the list holds %d", v.name, m.NumParams(), n)
		}
		stored := m.stored()
		for i, q := range ps {
			if stored[i].name != q.Name {
				t.Errorf("%s: checkpoint tensor %d is %s, parameter %d is %s", v.name, i, stored[i].name, i, q.Name)
			}
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// Matrices are the blocks' weight matrices, every one of them, and nothing else: not the
// embeddings, the head, or attention's 2-D position bias. What Muon updates
// (train.AdamConfig.Muon).
func TestMatricesAreTheBlocksWeights(t *testing.T) {
	weight := func(name string) bool {
		for _, suffix := range []string{".wq", ".wk", ".wv", ".wo", ".fc.w", ".proj.w"} {
			if strings.HasSuffix(name, suffix) && strings.HasPrefix(name, "h") {
				return true
			}
		}
		return false
	}
	for _, arch := range []string{"dp", "l2", "contractive-l2", "invertible-l2"} {
		cfg := tiny(arch)
		cfg.Tie = arch == "l2" // a tied table is decayed like a matrix, and is still not a block's
		if arch == "contractive-l2" || arch == "invertible-l2" {
			cfg.L2Bound, cfg.L2Temp, cfg.L2PosBias = mustBound("token2"), true, true // a (H, T) bias
		}
		m, err := New(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		var want, got []string
		for _, p := range m.Params() {
			if weight(p.Name) {
				want = append(want, p.Name)
			}
		}
		for _, p := range m.Matrices() {
			got = append(got, p.Name)
		}
		if !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("%s: matrices %v, want the blocks' weights %v", arch, got, want)
		}
	}
}
