package lipschitz

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"lipformer/internal/ref"
)

// docs/math.md's ("Attention") construction, the reason for ErrNotLipschitz: with
// D = H = 1, unit weights (a = 1) and x_0 = 0, row 0 of P is uniform and
// dF_0/dx_0 = P_00 + a Var_{P_0}(x), which grows quadratically as the other
// tokens spread.
func TestDPMHAJacobianUnbounded(t *testing.T) {
	one := []*mat.Dense{mat.NewDense(1, 1, []float64{1})}
	base := []float64{0, 1, -0.5, 2}
	n := len(base)
	f := seqMap(t, n, 1, func(x [][]float64) ([][]float64, error) {
		return ref.DPMHA(x, one, one, one, one[0], false)
	})
	previous := 0.0
	for _, spread := range []float64{1, 4, 16, 64} {
		x := make([]float64, n)
		mean, meanSq := 0.0, 0.0
		for j := range base {
			x[j] = spread * base[j]
			mean += x[j] / float64(n)
			meanSq += x[j] * x[j] / float64(n)
		}
		j := mustJacobian(t, f, x, 1e-6)
		want := 1/float64(n) + meanSq - mean*mean
		if got := j.At(0, 0); math.Abs(got-want) > 1e-6*want {
			t.Errorf("spread %v: dF_0/dx_0 = %.10g, want P_00 + Var = %.10g", spread, got, want)
		}
		norm := JacobianNormInf(j)
		// Quadratic growth: 16-fold per 4-fold spread once Var dominates.
		if !(norm > 8*previous) {
			t.Errorf("spread %v: ||J||_inf = %.6g, want over 8 times %.6g", spread, norm, previous)
		}
		t.Logf("spread %v: ||J||_inf = %.6g", spread, norm)
		previous = norm
	}
}
