package ops

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
)

// rows views a (N, D) float64 tensor's data as N row slices.
func rows(x *tensor.Dense) [][]float64 {
	s := x.Shape()
	d := s[len(s)-1]
	v := x.Data().([]float64)
	out := make([][]float64, len(v)/d)
	for i := range out {
		out[i] = v[i*d : (i+1)*d]
	}
	return out
}

// assertClose fails unless got and the row-major flattening of want agree to tol.
func assertClose(t *testing.T, what string, got []float64, want [][]float64, tol float64) {
	t.Helper()
	k := 0
	for i, r := range want {
		for j, w := range r {
			if d := got[k] - w; d > tol || d < -tol {
				t.Fatalf("%s [%d,%d]: got %.17g want %.17g", what, i, j, got[k], w)
			}
			k++
		}
	}
	if k != len(got) {
		t.Fatalf("%s: got %d values, want %d", what, len(got), k)
	}
}

// assertGrad fails if a gradient check errs or exceeds a relative error of 1e-6.
func assertGrad(t *testing.T, what string, res gradcheck.Result, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for name, e := range res.RelErr {
		if e > 1e-6 {
			t.Errorf("%s: gradient of %s has relative error %.3g", what, name, e)
		}
	}
}

// runGraph runs every node of g once on a tape machine, failing the test on an error; the
// nodes keep their values.
func runGraph(t *testing.T, g *G.ExprGraph) {
	t.Helper()
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
}
