package stats

import (
	"testing"
	"time"
)

func TestMedianFloat(t *testing.T) {
	xs := []float64{3, 1, 2}
	if m := Median(xs); m != 2 {
		t.Errorf("median of 3, 1, 2 is %v, want 2", m)
	}
	if xs[0] != 3 || xs[1] != 1 || xs[2] != 2 {
		t.Errorf("Median modified its argument: %v", xs)
	}
	if m := Median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 4, 1, 3, 2 is %v, want 2.5", m)
	}
	if m := Median([]float64{-1}); m != -1 {
		t.Errorf("median of -1 is %v", m)
	}
}

func TestMedianDuration(t *testing.T) {
	if m := Median([]time.Duration{5, 1, 3}); m != 3 {
		t.Errorf("median of 5, 1, 3 is %v", m)
	}
	if m := Median([]time.Duration{4, 1, 3, 2}); m != 2 {
		t.Errorf("median of 4, 1, 3, 2 is %v, want 2 (2.5 truncated)", m)
	}
}
