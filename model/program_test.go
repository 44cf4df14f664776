package model

import (
	"runtime"
	"testing"
	"weak"
)

// TestClosedProgramsAreCollected: a closed program, with its graph and every tensor of
// its last run, is garbage once unreferenced. A training program used to stay alive
// forever: its loss read op pointed into the Program, which holds the tape machine, which
// has a finalizer, and a cycle through an object with a finalizer is never collected.
func TestClosedProgramsAreCollected(t *testing.T) {
	for _, mode := range []Mode{Train, Eval, Sample} {
		m, err := New(tiny("l2"), 1)
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.NewProgram(mode, 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		w := weak.Make(p)
		p = nil
		for i := 0; i < 4 && w.Value() != nil; i++ {
			runtime.GC()
		}
		if w.Value() != nil {
			t.Errorf("mode %d: a closed, unreferenced program is never collected", mode)
		}
	}
}
