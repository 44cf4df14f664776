package model

import (
	"slices"
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
