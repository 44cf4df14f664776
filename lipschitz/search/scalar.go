package search

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"

	"lipformer/layers"
	"lipformer/ops"
)

// Scalar is single-head attention of width D = H = 1 on sequences of N
// tokens, with its Jacobian in closed form, in plain Go. With scalar weights
// (docs/math.md, "Attention" and "Bounds of tied L2 attention", d = 1):
//
//	dot product: logits L_ij = a x_i x_j,        a = W^Q W^K, F_i = c sum_j P_ij x_j, c = W^V W^O
//	tied L2:     logits L_ij = -a (x_i - x_j)^2, a = (W^Q)^2, F_i = c sum_j P_ij x_j, c = (W^Q)^2 W^V W^O
//
// with P = softmax_rows(L) over j <= i when causal. Writing m_i = sum_j P_ij x_j
// and g1_ij, g2_ij for the derivatives of L_ij in x_i and x_j, the Jacobian is
//
//	J_ik = c P_ik (1 + g2_ik (x_k - m_i)) + [k = i] c sum_j P_ij (x_j - m_i) g1_ij.
//
// A Jacobian costs O(N^2) time and memory; a VJP costs O(N) for each
// non-zero weight. Scalar is not safe for concurrent use.
type Scalar struct {
	kind   ops.AttentionKind
	n      int
	causal bool
	a, c   float64
	kern   []float64 // (N, N) kernel scratch of Jacobian
	row    []float64 // (N) probabilities of one row
}

// NewScalar returns the D = H = 1 attention of the given kind (ops.DotProduct
// or ops.L2) on sequences of n tokens with scalar weights wq, wk (ignored for
// L2), wv and wo. It returns an error for another kind, n < 1 or a weight that
// is not finite.
func NewScalar(kind ops.AttentionKind, n int, causal bool, wq, wk, wv, wo float64) (*Scalar, error) {
	if n < 1 {
		return nil, fmt.Errorf("search: sequence length n = %d, want >= 1", n)
	}
	for name, w := range map[string]float64{"wq": wq, "wk": wk, "wv": wv, "wo": wo} {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("search: scalar weight %s = %v, want finite", name, w)
		}
	}
	s := &Scalar{kind: kind, n: n, causal: causal, row: make([]float64, n)}
	switch kind {
	case ops.DotProduct:
		s.a, s.c = wq*wk, wv*wo
	case ops.L2:
		s.a, s.c = wq*wq, wq*wq*wv*wo
	default:
		return nil, fmt.Errorf("search: scalar attention of kind %v, want dp or l2", kind)
	}
	return s, nil
}

// ScalarFromLayer returns the Scalar form of a float64 attention layer of width
// D = 1 and one head, on sequences of n tokens, with the layer's current
// weights (later changes to them are not seen).
func ScalarFromLayer(a *layers.Attention, n int) (*Scalar, error) {
	if a == nil {
		return nil, fmt.Errorf("search: nil attention layer")
	}
	w := func(p *layers.Param) (float64, error) {
		if p == nil {
			return 0, nil
		}
		if p.Value.Dtype() != tensor.Float64 || p.Value.Shape().TotalSize() != 1 {
			return 0, fmt.Errorf("search: %s is %v %v, want float64 (1, 1): Scalar needs D = H = 1", p.Name, p.Value.Dtype(), p.Value.Shape())
		}
		return p.Value.Data().([]float64)[0], nil
	}
	var ws [4]float64
	for i, p := range []*layers.Param{a.WQ, a.WK, a.WV, a.WO} {
		var err error
		if ws[i], err = w(p); err != nil {
			return nil, err
		}
	}
	if a.Heads != 1 || a.LipC != 0 {
		return nil, fmt.Errorf("search: Scalar needs one head and no contractive scale, got %d heads and c = %v", a.Heads, a.LipC)
	}
	return NewScalar(a.Kind, n, a.Causal, ws[0], ws[1], ws[2], ws[3])
}

// Len is N.
func (s *Scalar) Len() int { return s.n }

// keep is the number of tokens row i attends to.
func (s *Scalar) keep(i int) int {
	if s.causal {
		return i + 1
	}
	return s.n
}

// logit is L_ij.
func (s *Scalar) logit(x []float64, i, j int) float64 {
	if s.kind == ops.L2 {
		d := x[i] - x[j]
		return -s.a * d * d
	}
	return s.a * x[i] * x[j]
}

// probRow writes row i of P into p[:keep(i)] and returns m_i = sum_j P_ij x_j.
func (s *Scalar) probRow(x []float64, i int, p []float64) float64 {
	keep := s.keep(i)
	top := math.Inf(-1)
	for j := range keep {
		p[j] = s.logit(x, i, j)
		top = math.Max(top, p[j])
	}
	z := 0.0
	for j := range keep {
		p[j] = math.Exp(p[j] - top)
		z += p[j]
	}
	return normalise(p[:keep], x, z)
}

// normalise divides p by z and returns sum_j p_j x_j.
func normalise(p, x []float64, z float64) float64 {
	m, inv := 0.0, 1/z
	x = x[:len(p)]
	for j := range p {
		p[j] *= inv
		m += p[j] * x[j]
	}
	return m
}

// jacRow writes row i of J into out from row i of P (p[:keep(i)]) and m_i.
// Entries beyond keep(i) are 0.
func (s *Scalar) jacRow(x []float64, i int, p []float64, m float64, out []float64) {
	keep := s.keep(i)
	p, xs, o := p[:keep], x[:keep], out[:keep]
	cov, xi := 0.0, x[i]
	if s.kind == ops.L2 {
		// g2_ij = 2a (x_i - x_j) = -g1_ij.
		for j, pj := range p {
			g2 := 2 * s.a * (xi - xs[j])
			cov -= pj * (xs[j] - m) * g2
			o[j] = s.c * pj * (1 + g2*(xs[j]-m))
		}
	} else {
		// g1_ij = a x_j, g2_ij = a x_i.
		g2 := s.a * xi
		for j, pj := range p {
			cov += pj * (xs[j] - m) * s.a * xs[j]
			o[j] = s.c * pj * (1 + g2*(xs[j]-m))
		}
	}
	clear(out[keep:])
	out[i] += s.c * cov
}

// Forward writes F(xs[b]) into dst[b].
func (s *Scalar) Forward(xs, dst [][]float64) error {
	if err := checkBatch(xs, nil, dst, s.n, false); err != nil {
		return err
	}
	for b, x := range xs {
		for i := range s.n {
			dst[b][i] = s.c * s.probRow(x, i, s.row)
		}
	}
	return nil
}

// VJP writes us[b]^T J(xs[b]) into dst[b], computing only the rows of J with
// a non-zero weight.
func (s *Scalar) VJP(xs, us, dst [][]float64) error {
	if err := checkBatch(xs, us, dst, s.n, true); err != nil {
		return err
	}
	jrow := make([]float64, s.n)
	for b, x := range xs {
		clear(dst[b])
		for i, u := range us[b] {
			if u == 0 {
				continue
			}
			s.jacRow(x, i, s.row, s.probRow(x, i, s.row), jrow)
			for k, v := range jrow {
				dst[b][k] += u * v
			}
		}
	}
	return nil
}

// Jacobian writes J(x) into dst (N, N). For L2 the symmetric kernel
// exp(-a (x_i - x_j)^2) is computed once per pair.
func (s *Scalar) Jacobian(x []float64, dst *mat.Dense) error {
	if err := checkVec("x", x, s.n); err != nil {
		return err
	}
	if err := checkJacobianDst(dst, s.n); err != nil {
		return err
	}
	if s.kind != ops.L2 {
		for i := range s.n {
			s.jacRow(x, i, s.row, s.probRow(x, i, s.row), dst.RawRowView(i))
		}
		return nil
	}
	n := s.n
	if s.kern == nil {
		s.kern = make([]float64, n*n)
	}
	for i := range n {
		s.kern[i*n+i] = 1
		for j := range i {
			d := x[i] - x[j]
			e := math.Exp(-s.a * d * d)
			s.kern[i*n+j], s.kern[j*n+i] = e, e
		}
	}
	for i := range n {
		p := s.row[:s.keep(i)]
		copy(p, s.kern[i*n:])
		z := 0.0
		for _, e := range p {
			z += e
		}
		s.jacRow(x, i, s.row, normalise(p, x, z), dst.RawRowView(i))
	}
	return nil
}
