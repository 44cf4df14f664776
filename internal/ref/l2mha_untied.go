package ref

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// L2MHAUntied is the untied L2 attention ablation (docs/math.md,
// not Lipschitz). For each head h: q_i = x_i W^{Q,h}, k_j = x_j W^{K,h},
// logits L_ij = -||q_i - k_j||^2 / sqrt(d), P = softmax_rows(L) (causal: row
// i sees j <= i) and plain values head_h = P X W^{V,h}. The result is
// [head_1, ..., head_H] W^O.
//
// x is (N, D); wq, wk, wv hold H matrices (D, d) with d = D/H; wo is (D, D).
func L2MHAUntied(x [][]float64, wq, wk, wv []*mat.Dense, wo *mat.Dense, causal bool) ([][]float64, error) {
	_, _, heads, d, err := checkMHA(x, wo, headWeights{"wq", wq}, headWeights{"wk", wk}, headWeights{"wv", wv})
	if err != nil {
		return nil, err
	}
	scale := 1 / math.Sqrt(float64(d))
	out := make([][][]float64, heads)
	for h := range heads {
		q := mul(x, wq[h]) // (N, d)
		k := mul(x, wk[h]) // (N, d)
		p, err := Softmax(l2Logits(q, k, scale), causal)
		if err != nil {
			return nil, err
		}
		out[h] = matmul(p, mul(x, wv[h]))
	}
	return concatProject(out, wo), nil
}
