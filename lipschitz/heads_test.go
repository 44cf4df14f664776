package lipschitz

import (
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestHeadSlices(t *testing.T) {
	// A 4x6 matrix with entry (r, c) = 10 r + c, split into 3 heads of 2 columns.
	w := mat.NewDense(4, 6, nil)
	for r := range 4 {
		for c := range 6 {
			w.Set(r, c, float64(10*r+c))
		}
	}
	heads, err := HeadSlices(w, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(heads) != 3 {
		t.Fatalf("got %d heads, want 3", len(heads))
	}
	for h, m := range heads {
		if r, c := m.Dims(); r != 4 || c != 2 {
			t.Fatalf("head %d is %dx%d, want 4x2", h, r, c)
		}
		for r := range 4 {
			for c := range 2 {
				if got, want := m.At(r, c), float64(10*r+h*2+c); got != want {
					t.Errorf("head %d (%d, %d) = %v, want %v", h, r, c, got, want)
				}
			}
		}
	}
	w.Set(0, 0, -1)
	if heads[0].At(0, 0) != 0 {
		t.Error("head 0 changed with w: want an independent copy")
	}
}

func TestHeadSlicesErrors(t *testing.T) {
	if _, err := HeadSlices(mat.NewDense(4, 6, nil), 4); err == nil {
		t.Error("6 columns into 4 heads: want error")
	}
	if _, err := HeadSlices(mat.NewDense(4, 4, nil), 0); err == nil {
		t.Error("0 heads: want error")
	}
	if _, err := HeadSlices(nil, 1); err == nil {
		t.Error("nil matrix: want error")
	}
}
