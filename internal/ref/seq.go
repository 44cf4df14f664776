package ref

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// dims returns the shape (rows, cols) of a sequence, or an error naming arg
// if it is empty or ragged.
func dims(arg string, x [][]float64) (int, int, error) {
	if len(x) == 0 {
		return 0, 0, fmt.Errorf("ref: %s has no rows", arg)
	}
	cols := len(x[0])
	if cols == 0 {
		return 0, 0, fmt.Errorf("ref: %s row 0 is empty", arg)
	}
	for i, row := range x {
		if len(row) != cols {
			return 0, 0, fmt.Errorf("ref: %s row %d has length %d, want %d (ragged)", arg, i, len(row), cols)
		}
	}
	return len(x), cols, nil
}

// checkWeight returns an error unless w is a non-nil (rows, cols) matrix.
// The error names the argument arg, or its head idx when idx >= 0 (a per-head
// set, whose matrices are (D, d) with D taken from x).
func checkWeight(arg string, idx int, w *mat.Dense, rows, cols int) error {
	if w != nil {
		if r, c := w.Dims(); r == rows && c == cols {
			return nil
		}
	}
	if idx >= 0 {
		arg = fmt.Sprintf("%s[%d] (D x d, D from x)", arg, idx)
	}
	if w == nil {
		return fmt.Errorf("ref: %s is nil, want %dx%d", arg, rows, cols)
	}
	r, c := w.Dims()
	return fmt.Errorf("ref: %s is %dx%d, want %dx%d", arg, r, c, rows, cols)
}

// zeros returns an (n, m) sequence of zeros, its rows sharing one backing
// array.
func zeros(n, m int) [][]float64 {
	data := make([]float64, n*m)
	out := make([][]float64, n)
	for i := range out {
		out[i] = data[i*m : (i+1)*m : (i+1)*m]
	}
	return out
}

// centred returns row minus its mean and the sum of the squares of the result.
func centred(row []float64) (c []float64, sumSq float64) {
	mean := 0.0
	for _, v := range row {
		mean += v
	}
	mean /= float64(len(row))
	c = make([]float64, len(row))
	for k, v := range row {
		c[k] = v - mean
		sumSq += c[k] * c[k]
	}
	return c, sumSq
}

// Flatten returns vec(X), the row-major flattening of an (N, D) sequence:
// element i*D+k is X[i][k]. It returns an error if x is empty or ragged.
func Flatten(x [][]float64) ([]float64, error) {
	n, d, err := dims("x", x)
	if err != nil {
		return nil, err
	}
	v := make([]float64, 0, n*d)
	for _, row := range x {
		v = append(v, row...)
	}
	return v, nil
}

// Unflatten is the inverse of Flatten: it reshapes v (length n*d) into an
// (n, d) sequence, copying the data.
func Unflatten(v []float64, n, d int) ([][]float64, error) {
	if n < 1 || d < 1 {
		return nil, fmt.Errorf("ref: Unflatten shape %dx%d must be positive", n, d)
	}
	if len(v) != n*d {
		return nil, fmt.Errorf("ref: Unflatten got %d values, want %d (%dx%d)", len(v), n*d, n, d)
	}
	x := zeros(n, d)
	for i := range n {
		copy(x[i], v[i*d:(i+1)*d])
	}
	return x, nil
}
