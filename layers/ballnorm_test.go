package layers

import (
	"fmt"
	"math"
	"testing"

	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/internal/ref"
)

// TestBallNormForwardAndGradient: at radii 0.45, 2.0 and 6.7, below, among and above the
// rows' centred norms (1.3 to 2.4), the layer is the reference's centring and projection onto
// the ball of radius sqrt(D) rho, and its gradients, the log radius's included, match
// central differences.
func TestBallNormForwardAndGradient(t *testing.T) {
	const d = 5
	for _, rho := range []float64{0.2, 0.9, 3} {
		b, err := NewBallNorm("ball", d, rho, tensor.Float64)
		if err != nil {
			t.Fatal(err)
		}
		if r := b.Radius(); math.Abs(r-rho*math.Sqrt(d)) > 1e-12 {
			t.Fatalf("radius %g, want %g", r, rho*math.Sqrt(d))
		}
		x := gradcheck.Rand(3, 1, 6, d)
		want, err := ref.BallNorm(rowsOf(x), b.Radius())
		if err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("ball norm, rho %g", rho)
		assertRows(t, what, forward(t, x, 1, 6, b.Forward), want, 1e-12)
		checkGrad(t, what, []*Param{b.LogRadius}, x, 1, 6, b.Forward)
	}
}

func TestBallNormRejectsBadRadius(t *testing.T) {
	for _, rho := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if _, err := NewBallNorm("ball", 4, rho, tensor.Float64); err == nil {
			t.Errorf("initial radius %g accepted", rho)
		}
	}
}
