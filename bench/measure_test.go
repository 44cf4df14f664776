package bench

import (
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	if m := median([]time.Duration{5, 1, 3}); m != 3 {
		t.Errorf("median of 5, 1, 3 is %v", m)
	}
	if m := median([]time.Duration{4, 1, 3, 2}); m != 2 {
		t.Errorf("median of 4, 1, 3, 2 is %v, want 2 (2.5 truncated)", m)
	}
}
