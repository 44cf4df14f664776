package ref

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// L2MHA is tied L2 multihead attention, computed literally as docs/math.md, "Bounds of tied L2 attention"
// states it (not in the cheaper factorised form). For each head h:
// q_i = x_i W^{Q,h}, logits L_ij = -||q_i - q_j||^2 / sqrt(d) summed as a
// squared distance, P = softmax_rows(L) (causal: row i sees j <= i, always
// including i), A_h = W^{Q,h} (W^{Q,h})^T / sqrt(d) (D, D) and
// head_h = P X A_h W^{V,h}. The result is [head_1, ..., head_H] W^O.
//
// x is (N, D); wq and wv hold H matrices (D, d) with d = D/H; wo is (D, D).
func L2MHA(x [][]float64, wq, wv []*mat.Dense, wo *mat.Dense, causal bool) ([][]float64, error) {
	return l2MHA(x, wq, wv, wo, causal, nil)
}

// L2MHABiased is causal L2MHA with a position bias: head h's logit of row i and column
// j <= i gains bias[h][i-j] (bias[h] has at least N entries).
func L2MHABiased(x [][]float64, wq, wv []*mat.Dense, wo *mat.Dense, bias [][]float64) ([][]float64, error) {
	if len(bias) != len(wq) {
		return nil, fmt.Errorf("ref: %d bias rows for %d heads", len(bias), len(wq))
	}
	for h, b := range bias {
		if len(b) < len(x) {
			return nil, fmt.Errorf("ref: bias of head %d has %d entries for %d tokens", h, len(b), len(x))
		}
	}
	return l2MHA(x, wq, wv, wo, true, bias)
}

// l2MHA is L2MHA with an optional position bias.
func l2MHA(x [][]float64, wq, wv []*mat.Dense, wo *mat.Dense, causal bool, bias [][]float64) ([][]float64, error) {
	_, dim, heads, d, err := checkMHA(x, wo, headWeights{"wq", wq}, headWeights{"wv", wv})
	if err != nil {
		return nil, err
	}
	scale := 1 / math.Sqrt(float64(d))
	out := make([][][]float64, heads)
	for h := range heads {
		q := mul(x, wq[h]) // (N, d)
		logits := l2Logits(q, q, scale)
		if bias != nil {
			for i := range logits {
				for j := 0; j <= i; j++ {
					logits[i][j] += bias[h][i-j]
				}
			}
		}
		p, err := Softmax(logits, causal)
		if err != nil {
			return nil, err
		}
		a := zeros(dim, dim) // (D, D)
		for r := range dim {
			for c := range dim {
				s := 0.0
				for l := range d {
					s += wq[h].At(r, l) * wq[h].At(c, l)
				}
				a[r][c] = s * scale
			}
		}
		values := mul(matmul(x, a), wv[h]) // (N, d) = X A_h W^{V,h}
		out[h] = matmul(p, values)
	}
	return concatProject(out, wo), nil
}

// l2Logits returns the (N, N) logits L_ij = -scale * ||q_i - k_j||^2 for
// (N, d) queries q and keys k, each squared distance summed directly.
func l2Logits(q, k [][]float64, scale float64) [][]float64 {
	logits := zeros(len(q), len(k))
	for i := range q {
		for j := range k {
			s := 0.0
			for c := range q[i] {
				diff := q[i][c] - k[j][c]
				s += diff * diff
			}
			logits[i][j] = -s * scale
		}
	}
	return logits
}
