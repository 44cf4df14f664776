package lipschitz

import (
	"math"
	"testing"

	"lipformer/internal/ref"
)

// geluSlope is the central-difference derivative of the reference GELU.
func geluSlope(x float64) float64 {
	const h = 1e-5
	return (ref.GELU(x+h) - ref.GELU(x-h)) / (2 * h)
}

// goldenMax returns the maximiser of a unimodal f on [a, b].
func goldenMax(f func(float64) float64, a, b float64) float64 {
	r := (math.Sqrt(5) - 1) / 2
	for b-a > 1e-9 {
		c, d := b-r*(b-a), a+r*(b-a)
		if f(c) > f(d) {
			b = d
		} else {
			a = c
		}
	}
	return (a + b) / 2
}

func TestGELULipIsMaxSlope(t *testing.T) {
	// Scan the slope of GELU for its largest magnitude, then refine.
	best, bestX := 0.0, 0.0
	for x := -8.0; x <= 8; x += 1e-3 {
		if s := math.Abs(geluSlope(x)); s > best {
			best, bestX = s, x
		}
	}
	x := goldenMax(geluSlope, bestX-0.01, bestX+0.01)
	if got := geluSlope(x); math.Abs(got-GELULip) > 1e-9 {
		t.Errorf("numerical max slope %.12g at x = %.6g, GELULip = %.12g", got, x, GELULip)
	}
	if math.Abs(x-math.Sqrt2) > 1e-4 {
		t.Errorf("max slope at x = %v, want sqrt 2", x)
	}
	closed := (1+math.Erf(1))/2 + 1/(math.E*math.Sqrt(math.Pi))
	if math.Abs(closed-GELULip) > 1e-15 {
		t.Errorf("GELULip = %.17g, closed form gives %.17g", GELULip, closed)
	}
}
