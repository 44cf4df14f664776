package lipschitz

import (
	"math"
	"testing"
)

func TestLambertW0KnownValues(t *testing.T) {
	cases := []struct {
		x, want, tol float64
	}{
		{0, 0, 0},
		{1, 0.5671432904097838, 1e-15}, // the omega constant
		{math.E, 1, 1e-15},
		{2 * math.Exp(2), 2, 1e-15},
		{-math.Log(2) / 2, -math.Log(2), 1e-12}, // (-ln 2) e^{-ln 2} = -ln(2)/2
		{branchPoint, -1, 1e-7},                 // ill-conditioned: loosely
	}
	for _, c := range cases {
		if got := LambertW0(c.x); math.Abs(got-c.want) > c.tol {
			t.Errorf("LambertW0(%v) = %.17g, want %.17g", c.x, got, c.want)
		}
	}
}

// For x > 0, w > 0 and the relative error of w is the relative residual of
// w e^w divided by (1 + w), so a relative residual below 1e-12 bounds it.
func TestLambertW0Residual(t *testing.T) {
	for e := -10.0; e <= 6; e += 0.01 {
		x := math.Pow(10, e)
		w := LambertW0(x)
		if r := math.Abs(w*math.Exp(w)-x) / x; !(r < 1e-12) {
			t.Fatalf("LambertW0(%g) = %.17g: relative residual %.3g", x, w, r)
		}
	}
}

func TestLambertW0Negative(t *testing.T) {
	// On (-1/e, 0) the result lies in (-1, 0); the residual is absolute.
	for x := branchPoint + 1e-9; x < 0; x += 0.003 {
		w := LambertW0(x)
		if !(w > -1 && w < 0) {
			t.Fatalf("LambertW0(%v) = %v, want in (-1, 0)", x, w)
		}
		if r := math.Abs(w*math.Exp(w) - x); r > 1e-15 {
			t.Fatalf("LambertW0(%v) = %.17g: residual %.3g", x, w, r)
		}
	}
}

func TestLambertW0OutsideDomain(t *testing.T) {
	for _, x := range []float64{branchPoint - 1e-9, -1, math.Inf(-1), math.NaN()} {
		if got := LambertW0(x); !math.IsNaN(got) {
			t.Errorf("LambertW0(%v) = %v, want NaN", x, got)
		}
	}
	if got := LambertW0(math.Inf(1)); !math.IsInf(got, 1) {
		t.Errorf("LambertW0(+Inf) = %v, want +Inf", got)
	}
	if got := LambertW0(1e300); math.Abs(got*math.Exp(got-math.Log(1e300))-1) > 1e-12 {
		t.Errorf("LambertW0(1e300) = %v: residual too large", got)
	}
}

func TestPhiInv(t *testing.T) {
	if got := PhiInv(1); got != 0 {
		t.Errorf("PhiInv(1) = %v, want 0", got)
	}
	for _, n := range []int{2, 3, 10, 128, 1024, 1 << 20} {
		x := PhiInv(n)
		// phi(x) = x e^{x+1} must give back n - 1.
		if phi := x * math.Exp(x+1); math.Abs(phi-float64(n-1)) > 1e-12*float64(n-1) {
			t.Errorf("phi(PhiInv(%d)) = %.17g, want %d", n, phi, n-1)
		}
	}
	if got := PhiInv(0); !math.IsNaN(got) {
		t.Errorf("PhiInv(0) = %v, want NaN", got)
	}
}
