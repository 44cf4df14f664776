package ref

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randSeq returns an (n, d) sequence of N(0, scale^2) entries.
func randSeq(rng *rand.Rand, n, d int, scale float64) [][]float64 {
	x := zeros(n, d)
	for i := range x {
		for k := range x[i] {
			x[i][k] = scale * rng.NormFloat64()
		}
	}
	return x
}

// randDense returns an (r, c) matrix of N(0, scale^2) entries.
func randDense(rng *rand.Rand, r, c int, scale float64) *mat.Dense {
	w := mat.NewDense(r, c, nil)
	for i := range r {
		for j := range c {
			w.Set(i, j, scale*rng.NormFloat64())
		}
	}
	return w
}

// randHeads returns H random (D, D/H) matrices.
func randHeads(rng *rand.Rand, heads, dim int, scale float64) []*mat.Dense {
	ws := make([]*mat.Dense, heads)
	for h := range ws {
		ws[h] = randDense(rng, dim, dim/heads, scale)
	}
	return ws
}

// toDense copies a sequence into a *mat.Dense.
func toDense(x [][]float64) *mat.Dense {
	m := mat.NewDense(len(x), len(x[0]), nil)
	for i := range x {
		m.SetRow(i, x[i])
	}
	return m
}

// assertClose fails t unless got and want have the same shape and agree
// elementwise to tol (absolute, scaled by max(1, |want|)).
func assertClose(t *testing.T, name string, got, want [][]float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", name, len(got), len(want))
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("%s: row %d has %d entries, want %d", name, i, len(got[i]), len(want[i]))
		}
		for k := range want[i] {
			if d := math.Abs(got[i][k] - want[i][k]); !(d <= tol*math.Max(1, math.Abs(want[i][k]))) {
				t.Fatalf("%s[%d][%d] = %.17g, want %.17g (diff %.3g)", name, i, k, got[i][k], want[i][k], d)
			}
		}
	}
}

// rowsOf copies a *mat.Dense into a sequence.
func rowsOf(m mat.Matrix) [][]float64 {
	r, c := m.Dims()
	x := zeros(r, c)
	for i := range r {
		for k := range c {
			x[i][k] = m.At(i, k)
		}
	}
	return x
}
