package lipschitz

import (
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// L2MHABoundInfProduct returns the product-form inf-norm Lipschitz upper bound of tied L2
// multihead attention on sequences of n tokens (docs/math.md, "The product bound"):
//
//	(4 sqrt(d) phi^{-1}(n-1) + 1) * max_e sum_h ||W^{Q,h}^T||_inf * sum_r |N_h[r, e]|
//
// with N_h = (W^{Q,h})^T W^{V,h} W^{O,h} / sqrt(d) (d, D), W^{O,h} the rows h*d..(h+1)*d of
// W^O. It writes head h as u(X W^{Q,h}) N_h, with u(Y) = P(Y) Y the L2 attention of identity
// weights, whose inf-norm constant 4 sqrt(d) phi^{-1}(n-1) + 1 does not depend on the
// logits' temperature; so it also bounds a layer whose logits use the queries times any
// positive per-head factor. For one head it is at most L2MHABoundInf, and equal for D = 1.
// The arguments are as for L2MHABoundInf.
func L2MHABoundInfProduct(n int, wq, wv []*mat.Dense, wo *mat.Dense) (float64, error) {
	return L2MHABoundInfProductBiased(n, wq, wv, wo, nil)
}

// L2MHABoundInfProductBiased is L2MHABoundInfProduct for causal attention whose head h adds
// bias[h][i-j] to the logit of row i, column j <= i: head h's constant becomes
// 4 sqrt(d) phi^{-1}(S_h) + 1 inside the sum over heads, S_h = BiasMass(bias[h], n)
// (docs/math.md, "Position bias"). bias nil is no bias; otherwise it holds one row of at
// least n entries per head.
func L2MHABoundInfProductBiased(n int, wq, wv []*mat.Dense, wo *mat.Dense, bias [][]float64) (float64, error) {
	d, err := checkL2MHA(n, wq, wv, wo)
	if err != nil {
		return 0, err
	}
	if err := checkBias(bias, len(wq), n); err != nil {
		return 0, err
	}
	dim := wo.RawMatrix().Rows
	stacked := StackedN(wq, wv, wo)
	cols := make([]float64, dim) // sum_h k_h a_h sum_r |N_h[r, e]| per output column e
	for h := range wq {
		a := HeadConstInf(bias, h, n, d) * NormInf(wq[h].T())
		for e := range dim {
			s := 0.0
			for r := range d {
				s += math.Abs(stacked.At(h*d+r, e))
			}
			cols[e] += a * s
		}
	}
	largest := 0.0
	for _, s := range cols {
		largest = math.Max(largest, s)
	}
	return largest, nil
}

// StackedN returns N (D, D) of tied L2 attention with per-head query and value maps wq and
// wv (D, d each) and output map wo (D, D): row block h is N_h = (W^{Q,h})^T W^{V,h}
// W^{O,h} / sqrt(d), W^{O,h} the rows h*d..(h+1)*d of wo, so that head h's output is
// P Q_h N_h (docs/math.md, "The decomposition every bound uses").
func StackedN(wq, wv []*mat.Dense, wo *mat.Dense) *mat.Dense {
	dim := wo.RawMatrix().Rows
	d := dim / len(wq)
	n, m := mat.NewDense(dim, dim, nil), mat.NewDense(d, d, nil)
	for h := range wq {
		m.Mul(wq[h].T(), wv[h])
		m.Scale(1/math.Sqrt(float64(d)), m)
		n.Slice(h*d, (h+1)*d, 0, dim).(*mat.Dense).Mul(m, wo.Slice(h*d, (h+1)*d, 0, dim))
	}
	return n
}

// StackedNMulVec writes into y (D) N x, or N^T x with trans, for N = StackedN(wq, wv, wo)
// and x (D), without forming N: per head, three products of a (D, d) block with a vector,
// 3 D d multiply-adds, where forming N takes 2 D^2 d. tmp is scratch of D + d elements.
// Power iteration on N needs these products alone.
func StackedNMulVec(y []float64, wq, wv []*mat.Dense, wo *mat.Dense, x []float64, trans bool, tmp []float64) {
	dim := wo.RawMatrix().Rows
	d := dim / len(wq)
	inv := 1 / math.Sqrt(float64(d))
	long, short := tmp[:dim], tmp[dim:dim+d]
	o := wo.RawMatrix()
	if trans {
		clear(y)
	}
	for h := range wq {
		q, v := wq[h].RawMatrix(), wv[h].RawMatrix()
		if !trans { // N_h x = (W^{Q,h})^T (W^{V,h} (W^{O,h} x)) / sqrt(d)
			for r := range d {
				short[r] = floats.Dot(o.Data[(h*d+r)*o.Stride:][:dim], x)
			}
			for i := range dim {
				long[i] = floats.Dot(v.Data[i*v.Stride:][:d], short)
			}
			out := y[h*d : (h+1)*d]
			clear(out)
			for i, li := range long {
				floats.AddScaled(out, li*inv, q.Data[i*q.Stride:][:d])
			}
			continue
		}
		// N_h^T x_h = (W^{O,h})^T ((W^{V,h})^T (W^{Q,h} x_h)) / sqrt(d), summed over h
		xh := x[h*d : (h+1)*d]
		for i := range dim {
			long[i] = floats.Dot(q.Data[i*q.Stride:][:d], xh)
		}
		clear(short)
		for i, li := range long {
			floats.AddScaled(short, li, v.Data[i*v.Stride:][:d])
		}
		for r, sr := range short {
			floats.AddScaled(y, sr*inv, o.Data[(h*d+r)*o.Stride:][:dim])
		}
	}
}

// IdentityL2LipInf is the inf-norm Lipschitz upper bound 4 sqrt(d) phi^{-1}(n-1) + 1 of
// u(Y) = P(Y) Y on sequences of n tokens of width d, with P = softmax of the logits
// -||y_i - y_j||^2 / tau for any temperature tau > 0 (docs/math.md, "The product bound"):
// the token-norm lemma read in the inf-norm, where a change of inf-norm 1 moves a token by
// at most sqrt(d) in the 2-norm. It is Kim et al.'s Thm 3.2 for one head of identity
// weights, scaled by sqrt(d).
func IdentityL2LipInf(n, d int) float64 {
	return 4*math.Sqrt(float64(d))*PhiInv(n) + 1
}
