package ref

import (
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestLinearHandComputed(t *testing.T) {
	x := [][]float64{{1, 2}, {0, -1}}
	w := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	got, err := Linear(x, w, []float64{1, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "Linear", got, [][]float64{{10, 13, 16}, {-3, -4, -5}}, 0)
	got, err = Linear(x, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "Linear without bias", got, [][]float64{{9, 12, 15}, {-4, -5, -6}}, 0)
}

func TestLinearErrors(t *testing.T) {
	x := [][]float64{{1, 2}}
	if _, err := Linear(x, mat.NewDense(3, 3, nil), nil); err == nil {
		t.Error("w 3x3 for Din = 2: want error")
	}
	if _, err := Linear(x, mat.NewDense(2, 3, nil), []float64{1}); err == nil {
		t.Error("b of length 1 for Dout = 3: want error")
	}
	if _, err := Linear(x, nil, nil); err == nil {
		t.Error("nil w: want error")
	}
}
