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
