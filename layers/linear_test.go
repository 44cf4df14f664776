package layers

import (
	"testing"

	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/internal/ref"
)

func TestLinearForwardAndGradient(t *testing.T) {
	for _, bias := range []bool{false, true} {
		l := NewLinear("lin", 5, 3, bias, 0.5, tensor.Float64, rng(1))
		if bias {
			l.B.fillNormal(rng(2), 0.5)
		}
		x := gradcheck.Rand(3, 1, 4, 5)
		var b []float64
		params := []*Param{l.W}
		if bias {
			b = l.B.Float64s()
			params = append(params, l.B)
		}
		want, err := ref.Linear(rowsOf(x), matOf(l.W), b)
		if err != nil {
			t.Fatal(err)
		}
		assertRows(t, "linear", forward(t, x, 1, 4, l.Forward), want, 1e-13)
		checkGrad(t, "linear", params, x, 1, 4, l.Forward)
	}
}

func TestLinearBounds(t *testing.T) {
	l := NewLinear("lin", 2, 2, false, 1, tensor.Float64, rng(1))
	copy(l.W.Value.Data().([]float64), []float64{1, -2, 3, 4}) // W = [[1, -2], [3, 4]]
	if got := l.LipschitzInf(); got != 6 {                     // ||W^T||_inf = max absolute column sum = 2+4
		t.Errorf("inf: got %v want 6", got)
	}
	if got := l.Lipschitz2(); got < 5.11 || got > 5.12 { // sigma_max of [[1,-2],[3,4]] = 5.1167...
		t.Errorf("2: got %v want 5.1167", got)
	}
}
