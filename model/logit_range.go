package model

import "gonum.org/v1/gonum/floats"

// TokenDiameter is the largest distance between two rows of the token table the look-up
// reads, max_{a != b} ||e_a - e_b||_2: the largest token-norm distance between the embedded
// inputs of two texts of the same length, whose position vectors cancel (docs/math.md, "The
// certified logit range"). For a table of more than exactRows rows it is the bound twice
// TokenBall's radius.
func (m *Model) TokenDiameter() float64 {
	_, farthest := m.byteDistances()
	return farthest
}

// ballSteps is the number of Badoiu-Clarkson steps of TokenBall: its radius is then within
// a factor 1 + 1/sqrt(ballSteps) of the smallest ball's. A larger table takes fewer, so
// that the steps read at most ballWork values.
const ballSteps = 1000

// ballWork bounds the values TokenBall's steps read: 1000 steps up to 32,768 rows of width 128.
const ballWork = 1 << 32

// TokenBall returns a centre e0 (D) and the radius max_b ||e_b - e0||_2 of a ball holding
// every row of the token table the look-up reads. Every embedded text is then within the
// radius, in the token norm, of the input whose token vectors are all e0 (plus the same
// position vectors), so at every position its logits lie within Tok2 x radius of that
// input's: the certified logit radius (docs/math.md, "What a logit ball allows"). The
// centre is the origin or Badoiu and Clarkson's approximate centre of the smallest ball,
// whichever gives the smaller radius; any centre gives a valid one.
func (m *Model) TokenBall() (centre []float64, radius float64) {
	R, D := m.Cfg.TokenRows(), m.Cfg.Width
	e := m.Tok.Rows() // (R, D)
	farthest := func(c []float64) (int, float64) {
		best, far := 0, -1.0
		for b := range R {
			if d := floats.Distance(e[b*D:(b+1)*D], c, 2); d > far {
				best, far = b, d
			}
		}
		return best, far
	}
	c := append([]float64(nil), e[:D]...)
	for i := 1; i <= min(ballSteps, max(ballWork/(R*D), 1)); i++ {
		b, _ := farthest(c)
		for j := range D {
			c[j] += (e[b*D+j] - c[j]) / float64(i+1)
		}
	}
	_, r := farthest(c)
	origin := make([]float64, D)
	if _, r0 := farthest(origin); r0 <= r {
		return origin, r0
	}
	return c, r
}
