package model

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// RadiusBound is what the whole-model certificate guarantees about the top-1 prediction at
// one position (docs/math.md, "What the certificate buys"): perturbing the input embeddings
// of a window by at most R in the token norm leaves the top-1 byte of position t's logits
// unchanged when R is below its certified radius.
type RadiusBound struct {
	// Whole is K, the certified token-norm constant of the whole model (Certificate's
	// product_tok2).
	Whole Bound
	// Body is L_h, the certified token-norm constant of the map from the input embeddings
	// to the head's input: every factor but the head's.
	Body Bound
	// Why names the factors without a bound when Body is infinite; empty otherwise.
	Why string
	// NearestBytes and FarthestBytes are the smallest and largest distance between two rows
	// of the token table: substituting bytes of a window moves its input embeddings by at
	// most FarthestBytes in the token norm, and a substitution of one byte for another by at
	// least NearestBytes (with n-byte tokens a substitution changes the rows of its position
	// and the n - 1 after it, each by that much). For a table of more than exactRows rows
	// FarthestBytes is the bound twice TokenBall's radius and NearestBytes 0: not computed.
	NearestBytes, FarthestBytes float64
	gram                        *mat.SymDense // (V, V) W^T W for the head's weight W (D, V) as applied
}

// RadiusBound computes the certificate of the current weights and the Gram matrix of the
// head's columns as the head applies them (the token table when tied, HeadGain W / sigma
// when spectrally normalised).
func (m *Model) RadiusBound() (*RadiusBound, error) {
	cert, err := m.Certificate()
	if err != nil {
		return nil, err
	}
	last := len(cert.Factors) - 1
	if last < 0 || cert.Factors[last].Name != "head" {
		return nil, fmt.Errorf("radius: the certificate's last factor is not the head's")
	}
	b := &RadiusBound{Whole: cert.Tok2, Body: 1}
	var unbounded []string
	for _, f := range cert.Factors[:last] {
		b.Body *= f.Tok2
		if math.IsInf(float64(f.Tok2), 1) {
			unbounded = append(unbounded, f.Name+": "+f.Note)
		}
	}
	b.Why = strings.Join(unbounded, "; ")
	b.NearestBytes, b.FarthestBytes = m.byteDistances()
	w := m.headWeight()
	b.gram = mat.NewSymDense(m.Cfg.Vocab, nil)
	b.gram.SymOuterK(1, w.T()) // (W^T)(W^T)^T = W^T W
	return b, nil
}

// exactRows is the largest token table whose smallest and largest distances between rows
// byteDistances computes pair by pair, about a second at width 128.
const exactRows = 8192

// distancesBounded reports whether the token table has more than exactRows rows, so that
// byteDistances bounds its distances by TokenBall's radius instead of searching them.
func (m *Model) distancesBounded() bool { return m.Cfg.TokenRows() > exactRows }

// byteDistances are the smallest and largest distance between two rows of the token table
// (0 and 0 for a vocabulary of one byte); for a table of more than exactRows rows, 0 and
// twice TokenBall's radius, a bound of the largest.
func (m *Model) byteDistances() (nearest, farthest float64) {
	R, D := m.Cfg.TokenRows(), m.Cfg.Width
	if m.distancesBounded() {
		_, r := m.TokenBall()
		return 0, 2 * r
	}
	e := m.Tok.Rows() // (R, D)
	nearest = math.Inf(1)
	for a := range R {
		for c := a + 1; c < R; c++ {
			d := floats.Distance(e[a*D:(a+1)*D], e[c*D:(c+1)*D], 2)
			nearest, farthest = math.Min(nearest, d), math.Max(farthest, d)
		}
	}
	if R < 2 {
		nearest = 0
	}
	return nearest, farthest
}

// headWeight is the head's weight as applied, (D, V): logits z = h W.
func (m *Model) headWeight() *mat.Dense {
	D, V := m.Cfg.Width, m.Cfg.Vocab
	switch {
	case m.Head == nil: // tied: z = h E^T, E the token table (V, D)
		return mat.DenseCopyOf(mat.NewDense(V, D, m.Tok.W.Float64s()).T())
	case m.HeadSN != nil:
		w := mat.NewDense(D, V, m.Head.W.Float64s())
		w.Scale(m.Cfg.HeadGain()/m.HeadSN.Sigma(), w)
		return w
	}
	return mat.NewDense(D, V, m.Head.W.Float64s())
}

// Radius returns the top-1 class y of the logits z (V) and its certified radii in the
// token norm of the input embeddings: the per-class one,
//
//	min over j != y of (z_y - z_j) / (L_h ||w_y - w_j||_2),
//
// and the whole-model one, (z_y - z_j*) / (sqrt(2) K) with j* the runner-up, never larger
// than the per-class one. Both are 0 when the certificate is infinite or the top logit is
// tied.
func (b *RadiusBound) Radius(z []float64) (top int, perClass, whole float64) {
	for j, v := range z {
		if v > z[top] {
			top = j
		}
	}
	if math.IsInf(float64(b.Body), 1) {
		return top, 0, 0
	}
	perClass, second := math.Inf(1), math.Inf(-1)
	for j, v := range z {
		if j == top {
			continue
		}
		second = math.Max(second, v)
		d2 := b.gram.At(top, top) + b.gram.At(j, j) - 2*b.gram.At(top, j) // ||w_y - w_j||^2
		if !(d2 > 0) {
			return top, 0, 0 // classes the head cannot tell apart: their logits tie
		}
		perClass = math.Min(perClass, (z[top]-v)/(float64(b.Body)*math.Sqrt(d2)))
	}
	if math.IsInf(second, -1) { // a single class
		return top, perClass, math.Inf(1)
	}
	return top, perClass, (z[top] - second) / (math.Sqrt2 * float64(b.Whole))
}
