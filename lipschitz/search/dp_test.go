package search

import (
	"testing"

	"lipformer/lipschitz"
	"lipformer/ops"
)

// docs/math.md's ("Attention") construction: D = H = 1 dot-product attention with unit
// weights, x_0 = 0 (row 0 of P uniform) and the other tokens spread by s.
// dF_0/dx_0 = P_00 + Var_{P_0}(x) grows quadratically in s, so the exact
// ||J||_inf at spread 10 s is more than 50 times that at spread s.
func TestDPJacobianGrowsWithSpread(t *testing.T) {
	base := []float64{0, 1, -0.5, 2, -1.5}
	n := len(base)
	a := newLayer(t, ops.DotProduct, 1, 1, false, 1, 1)
	setScalars(a, 1, 1, 1, 1)
	graph := newGraphMap(t, a, n, 0)
	scalar, err := ScalarFromLayer(a, n)
	if err != nil {
		t.Fatal(err)
	}
	at := func(m Map, s float64) float64 {
		x := make([]float64, n)
		for k := range x {
			x[k] = s * base[k]
		}
		return lipschitz.JacobianNormInf(mustJacobian(t, m, x))
	}
	for _, s := range []float64{1, 2, 4} {
		for name, m := range map[string]Map{"graph": graph, "scalar": scalar} {
			near, far := at(m, s), at(m, 10*s)
			if !(far > 50*near) {
				t.Errorf("%s: ||J||_inf = %.6g at spread %v and %.6g at %v: want over 50 times", name, near, s, far, 10*s)
			}
			t.Logf("%s spread %v: ||J||_inf %.4g, at 10x: %.4g (x%.1f)", name, s, near, far, far/near)
		}
	}
}
