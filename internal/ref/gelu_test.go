package ref

import (
	"math"
	"testing"
)

func TestGELU(t *testing.T) {
	if got := GELU(0); got != 0 {
		t.Errorf("GELU(0) = %v, want 0", got)
	}
	// Phi(1) from a standard normal table.
	if got := GELU(1); math.Abs(got-0.8413447460685429) > 1e-15 {
		t.Errorf("GELU(1) = %.17g, want Phi(1) = 0.8413447460685429", got)
	}
	// Phi(x) + Phi(-x) = 1, so GELU(x) - GELU(-x) = x.
	for _, x := range []float64{0.1, 0.7, 1.3, 2.5, 4} {
		if got := GELU(x) - GELU(-x); math.Abs(got-x) > 1e-15*x {
			t.Errorf("GELU(%v) - GELU(-%v) = %.17g, want %v", x, x, got, x)
		}
	}
	if got := GELU(10); math.Abs(got-10) > 1e-12 {
		t.Errorf("GELU(10) = %v, want about 10", got)
	}
	if got := GELU(-10); math.Abs(got) > 1e-12 {
		t.Errorf("GELU(-10) = %v, want about 0", got)
	}
}
