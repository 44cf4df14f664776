package expressive

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// DefaultMargin is a fixed margin, in nats, added to log(1/eps) in the logits of the
// constructive method: Delta = log(1/eps) + margin (the one of MarginFixed before the
// margin was optimised). See TargetLogits for the trade-off it balances; MarginCell and
// MarginTarget choose the margin (margin.go).
const DefaultMargin = 0.5

// TargetLogits returns the logits B of step 1 of the constructive algorithm: for A_ij > 0,
//
//	B_ij = log A_ij - min_{j' in S_i} log A_ij' + Delta,   Delta = log(1/eps) + margin,
//
// and B_ij = 0 off the support. Then exp(B_i) is proportional to A_i on S_i and every
// off-support entry is at least e^Delta times smaller than every on-support one. The margin
// absorbs the error of B G G^T against B in the leak condition; a larger margin also makes
// ||B_i|| (hence that error) larger, so it is a trade-off, not free. // B: (L, L)
func TargetLogits(t *Target, eps, margin float64) (*mat.Dense, error) {
	delta, err := jlDelta(eps, margin)
	if err != nil {
		return nil, err
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	b := mat.NewDense(t.L, t.L, nil)
	for i, row := range t.Rows {
		for _, e := range row {
			b.Set(i, e.Col, e.Val)
		}
		setRowLogits(b.RawRowView(i), row, delta)
	}
	return b, nil
}

// jlDelta validates eps and margin and returns Delta = log(1/eps) + margin.
func jlDelta(eps, margin float64) (float64, error) {
	if !(eps > 0 && eps < 1) {
		return 0, fmt.Errorf("expressive: precision eps = %v, want 0 < eps < 1", eps)
	}
	if !(margin >= 0) || math.IsInf(margin, 1) {
		return 0, fmt.Errorf("expressive: margin = %v, want finite and >= 0", margin)
	}
	return -math.Log(eps) + margin, nil
}

// setRowLogits overwrites the support entries of dst (a row of B) with the logits of
// TargetLogits; off-support entries are left untouched.
func setRowLogits(dst []float64, row []Entry, delta float64) {
	minLog := math.Inf(1)
	for _, e := range row {
		minLog = math.Min(minLog, math.Log(e.Val))
	}
	for _, e := range row {
		dst[e.Col] = math.Log(e.Val) - minLog + delta
	}
}

// JLMatrix returns G, an L x d matrix of independent N(0, 1/d) entries. Column c is drawn
// from its own stream of seed, so the first columns of G do not depend on d beyond the
// 1/sqrt(d) scale: the matrices of one seed are nested across d. // G: (L, d)
func JLMatrix(L, d int, seed uint64) (*mat.Dense, error) {
	if L < 1 || d < 1 {
		return nil, fmt.Errorf("expressive: G must be at least 1 x 1, got L = %d, d = %d", L, d)
	}
	g := mat.NewDense(L, d, nil)
	scale := 1 / math.Sqrt(float64(d))
	for c := range d {
		rng := streamRNG(seed, tagG, uint64(L), uint64(c))
		for i := range L {
			g.Set(i, c, scale*rng.NormFloat64())
		}
	}
	return g, nil
}

// JLModule returns the fixed module of step 3: W_Q = [I_d; 0] and W_K = [0; I_d], both
// 2d x d, so that X W_Q W_K^T X^T = (B G) G^T for X = [B G, G].
func JLModule(d int) (*Module, error) {
	if d < 1 {
		return nil, fmt.Errorf("expressive: head width d = %d, want >= 1", d)
	}
	wq, wk := mat.NewDense(2*d, d, nil), mat.NewDense(2*d, d, nil)
	for a := range d {
		wq.Set(a, a, 1)
		wk.Set(d+a, a, 1)
	}
	return NewModule(wq, wk)
}

// JLInput returns the input X = [B G, G] of step 3. // b: (L, L); g: (L, d); X: (L, 2d)
func JLInput(b, g *mat.Dense) (*mat.Dense, error) {
	L, d := g.Dims()
	if r, c := b.Dims(); r != L || c != L {
		return nil, fmt.Errorf("expressive: B is %d x %d but G is %d x %d, want B to be %d x %d", r, c, L, d, L, L)
	}
	x := mat.NewDense(L, 2*d, nil)
	bg := x.Slice(0, L, 0, d).(*mat.Dense)
	bg.Mul(b, g)
	x.Slice(0, L, d, 2*d).(*mat.Dense).Copy(g)
	return x, nil
}

// JLSet is the constructive method for one trial set: a fixed G, hence a fixed module of
// head width d, shared by every target realised with it. It holds G G^T, so that each
// target costs O(k L^2) instead of O(L^2 d).
type JLSet struct {
	Eps    float64
	Margin float64
	delta  float64
	gram   *mat.Dense // G G^T, (L, L)
}

// NewJLSet prepares the trial set from gram = G G^T (from Gram.At, or computed from
// JLMatrix). // gram: (L, L)
func NewJLSet(gram *mat.Dense, eps, margin float64) (*JLSet, error) {
	delta, err := jlDelta(eps, margin)
	if err != nil {
		return nil, err
	}
	if gram == nil {
		return nil, fmt.Errorf("expressive: G G^T is nil")
	}
	if r, c := gram.Dims(); r != c {
		return nil, fmt.Errorf("expressive: G G^T is %d x %d, want square", r, c)
	}
	return &JLSet{Eps: eps, Margin: margin, delta: delta, gram: gram}, nil
}

// Logits returns B G G^T for the target t, which equals the logits X W_Q W_K^T X^T of the
// module JLModule(d) on the input JLInput(B, G) (row i is the sum over the support of
// B_il times row l of G G^T). // result: (L, L)
func (s *JLSet) Logits(t *Target) (*mat.Dense, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	L, _ := s.gram.Dims()
	if t.L != L {
		return nil, fmt.Errorf("expressive: target has L = %d but G has %d rows", t.L, L)
	}
	z := mat.NewDense(L, L, nil)
	b := make([]float64, L)
	for i, row := range t.Rows {
		setRowLogits(b, row, s.delta)
		zi := z.RawRowView(i)
		for _, e := range row {
			w := b[e.Col]
			for j, v := range s.gram.RawRowView(e.Col) {
				zi[j] += w * v
			}
		}
	}
	return z, nil
}

// Try realises t with the trial set's module and returns its precision and the largest
// absolute logit.
func (s *JLSet) Try(t *Target) (Precision, float64, error) {
	z, err := s.Logits(t)
	if err != nil {
		return Precision{}, 0, err
	}
	p, err := MeasureLogits(z, t)
	return p, maxAbs(z), err
}
