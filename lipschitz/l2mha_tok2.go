package lipschitz

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// L2MHABoundTok2 returns an upper bound on the Lipschitz constant of tied L2 multihead
// attention on sequences of n tokens in the token norm ||X||_{inf,2} = max_i ||x_i||_2,
// the largest 2-norm of a token (docs/math.md, "The token-norm bound"):
//
//	(1 + 4 phi^{-1}(n-1)) * sqrt(sum_h ||W^{Q,h}||_2^2) * ||N||_2
//
// with N (D, D) stacking N_h = (W^{Q,h})^T W^{V,h} W^{O,h} / sqrt(d), W^{O,h} the rows
// h*d..(h+1)*d of W^O. Spectral norms are exact (SVD). Given a layer's weights before its
// per-head temperatures, it bounds the layer at every temperature. A map acting on each token alone, such as an MLP, has the same constant in
// this norm as in a token's 2-norm, so the two sub-blocks of an invertible block contract
// in one norm. The arguments are as for L2MHABoundInf.
func L2MHABoundTok2(n int, wq, wv []*mat.Dense, wo *mat.Dense) (float64, error) {
	return L2MHABoundTok2Biased(n, wq, wv, wo, nil)
}

// L2MHABoundTok2Biased is L2MHABoundTok2 for causal attention whose head h adds bias[h][i-j]
// to the logit of row i, column j <= i (docs/math.md, "Position bias"): head h's constant
// becomes k_h = 1 + 4 phi^{-1}(S_h) with S_h = BiasMass(bias[h], n), and
//
//	(sqrt(sum_h k_h^2 ||W^{Q,h}||_2^2)) * ||N||_2.
//
// bias nil is no bias (S_h = n - 1); otherwise it holds one row of at least n entries per
// head.
func L2MHABoundTok2Biased(n int, wq, wv []*mat.Dense, wo *mat.Dense, bias [][]float64) (float64, error) {
	if _, err := checkL2MHA(n, wq, wv, wo); err != nil {
		return 0, err
	}
	if err := checkBias(bias, len(wq), n); err != nil {
		return 0, err
	}
	sum := 0.0
	for h := range wq {
		q := HeadConstTok2(bias, h, n) * Norm2(wq[h])
		sum += q * q
	}
	bound := math.Sqrt(sum) * Norm2(StackedN(wq, wv, wo))
	if math.IsNaN(bound) {
		return 0, errNaNBound
	}
	return bound, nil
}

// IdentityL2LipTok2 is 1 + 4 phi^{-1}(n-1), the token-norm Lipschitz bound of
// u(Y) = P(Y) Y on sequences of n tokens of any width, with P = softmax of the logits
// -||y_i - y_j||^2 / tau for any tau > 0 (docs/math.md, "The token-norm bound").
func IdentityL2LipTok2(n int) float64 { return 1 + 4*PhiInv(n) }

// checkBias validates a position bias of one row of at least n finite entries per head, or
// nil.
func checkBias(bias [][]float64, heads, n int) error {
	if bias == nil {
		return nil
	}
	if len(bias) != heads {
		return fmt.Errorf("lipschitz: %d bias rows for %d heads", len(bias), heads)
	}
	for h, b := range bias {
		if len(b) < n {
			return fmt.Errorf("lipschitz: bias of head %d has %d entries, want at least n = %d", h, len(b), n)
		}
		for k, v := range b[:n] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("lipschitz: bias[%d][%d] = %v, want finite", h, k, v)
			}
		}
	}
	return nil
}

// HeadConstTok2 is head h's token-norm constant 1 + 4 phi^{-1}(S_h) on n tokens: S_h =
// BiasMass(bias[h], n), or n - 1 when bias is nil (IdentityL2LipTok2).
func HeadConstTok2(bias [][]float64, h, n int) float64 {
	if bias == nil {
		return IdentityL2LipTok2(n)
	}
	return 1 + 4*PhiInvOf(BiasMass(bias[h], n))
}

// HeadConstInf is head h's inf-norm constant 4 sqrt(d) phi^{-1}(S_h) + 1 on n tokens of
// width d, S_h as for HeadConstTok2 (IdentityL2LipInf without a bias).
func HeadConstInf(bias [][]float64, h, n, d int) float64 {
	if bias == nil {
		return IdentityL2LipInf(n, d)
	}
	return 4*math.Sqrt(float64(d))*PhiInvOf(BiasMass(bias[h], n)) + 1
}

// PhiInvOf is phi^{-1}(s) = W_0(s / e), s >= 0: PhiInv(n) is PhiInvOf(n - 1).
func PhiInvOf(s float64) float64 { return LambertW0(s / math.E) }

// BiasMass is S = sum_{delta=1}^{n-1} exp(b[delta] - b[0]), the weight a position bias b
// gives the other tokens of a row of n against the token itself, at equal distances: with
// it the lemma of the token-norm bound holds with phi^{-1}(S) in place of phi^{-1}(n-1)
// (S = n - 1 without a bias).
func BiasMass(b []float64, n int) float64 {
	s := 0.0
	for _, v := range b[1:n] {
		s += math.Exp(v - b[0])
	}
	return s
}
