package bench

import (
	"context"
	"slices"
	"strings"
	"testing"

	"lipformer/model"
	"lipformer/spec"
)

func TestSoakCheckpoints(t *testing.T) {
	for n, want := range map[int][]int{1: {0, 1}, 3: {0, 1, 2, 3}, 8: {0, 2, 4, 6, 8}, 1000: {0, 250, 500, 750, 1000}} {
		if got := SoakCheckpoints(n); !slices.Equal(got, want) {
			t.Errorf("SoakCheckpoints(%d) = %v, want %v", n, got, want)
		}
	}
}

// TestSoakSteps: a soak of no steps is refused.
func TestSoakSteps(t *testing.T) {
	p, err := model.FindPresets("tiny")
	if err != nil {
		t.Fatal(err)
	}
	j := NewJob(p[0], spec.DP, Settings{Seed: 1, Dtype: spec.Float32})
	if _, err := j.Soak(context.Background(), 0); err == nil || !strings.Contains(err.Error(), "soak of 0 steps") {
		t.Errorf("soak of 0 steps: %v", err)
	}
}

// TestSoakQuarters: a soak reads the heap and the mean step time at every quarter, none at
// step 0, and reports the last quarter's step time over the first's.
func TestSoakQuarters(t *testing.T) {
	p, err := model.FindPresets("tiny")
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewJob(p[0], spec.DP, Settings{Seed: 1, Dtype: spec.Float32}).Soak(context.Background(), 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Heap) != 5 || r.Heap[0].MsPerStep != 0 {
		t.Fatalf("checkpoints %+v, want 5 with no step time at step 0", r.Heap)
	}
	for _, h := range r.Heap[1:] {
		if !(h.MsPerStep > 0) {
			t.Errorf("checkpoint %+v: no step time", h)
		}
	}
	if want := r.Heap[4].MsPerStep / r.Heap[1].MsPerStep; r.Slowdown != want {
		t.Errorf("slowdown %g, want %g", r.Slowdown, want)
	}
}
