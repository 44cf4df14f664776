package ref

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// Linear returns x W + b row by row: y_i = x_i W + b for the (N, Din)
// sequence x and the (Din, Dout) matrix w. b has length Dout or is nil (no
// bias).
func Linear(x [][]float64, w *mat.Dense, b []float64) ([][]float64, error) {
	_, din, err := dims("x", x)
	if err != nil {
		return nil, err
	}
	if w == nil {
		return nil, fmt.Errorf("ref: Linear w is nil, want %dxDout", din)
	}
	_, dout := w.Dims()
	if err := checkWeight("Linear w", -1, w, din, dout); err != nil {
		return nil, err
	}
	if b != nil && len(b) != dout {
		return nil, fmt.Errorf("ref: Linear b has length %d, want Dout = %d", len(b), dout)
	}
	y := mul(x, w) // (N, Dout)
	if b != nil {
		for i := range y {
			for k := range dout {
				y[i][k] += b[k]
			}
		}
	}
	return y, nil
}

// mul returns x w for an (N, R) sequence x and an (R, C) matrix w whose
// shapes the caller has checked. The result is (N, C).
func mul(x [][]float64, w *mat.Dense) [][]float64 {
	r, c := w.Dims()
	y := zeros(len(x), c)
	for i := range x {
		for k := range c {
			s := 0.0
			for l := range r {
				s += x[i][l] * w.At(l, k)
			}
			y[i][k] = s
		}
	}
	return y
}
