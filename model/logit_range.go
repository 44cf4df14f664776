package model

import (
	"math"

	"gonum.org/v1/gonum/floats"
)

// TokenDiameter is the largest distance between two rows of the token embedding,
// max_{a != b} ||e_a - e_b||_2: the largest token-norm distance between the embedded inputs
// of two texts of the same length, whose position vectors cancel (docs/math.md, "The
// certified logit range").
func (m *Model) TokenDiameter() float64 {
	w := m.Tok.Rows() // (V, D)
	v, d := m.Cfg.Vocab, m.Cfg.Width
	diff := make([]float64, d)
	var diam float64
	for a := range v {
		for b := a + 1; b < v; b++ {
			floats.SubTo(diff, w[a*d:(a+1)*d], w[b*d:(b+1)*d])
			diam = math.Max(diam, floats.Norm(diff, 2))
		}
	}
	return diam
}
