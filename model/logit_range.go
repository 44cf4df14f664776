package model

// TokenDiameter is the largest distance between two rows of the token table the look-up
// reads, max_{a != b} ||e_a - e_b||_2: the largest token-norm distance between the embedded
// inputs of two texts of the same length, whose position vectors cancel (docs/math.md, "The
// certified logit range").
func (m *Model) TokenDiameter() float64 {
	_, farthest := m.byteDistances()
	return farthest
}
