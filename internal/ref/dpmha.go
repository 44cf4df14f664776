package ref

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// DPMHA is dot-product multihead attention (docs/math.md, "Attention"), without biases.
// For each head h: Q = X W^{Q,h}, K = X W^{K,h}, V = X W^{V,h} (each (N, d)),
// P = softmax_rows(Q K^T / sqrt(d)) (causal: row i sees j <= i) and
// head_h = P V. The result is [head_1, ..., head_H] W^O, an (N, D) sequence.
//
// x is (N, D); wq, wk, wv hold H matrices (D, d) with d = D/H; wo is (D, D).
func DPMHA(x [][]float64, wq, wk, wv []*mat.Dense, wo *mat.Dense, causal bool) ([][]float64, error) {
	n, _, heads, d, err := checkMHA(x, wo, headWeights{"wq", wq}, headWeights{"wk", wk}, headWeights{"wv", wv})
	if err != nil {
		return nil, err
	}
	scale := 1 / math.Sqrt(float64(d))
	out := make([][][]float64, heads)
	for h := range heads {
		q := mul(x, wq[h]) // (N, d)
		k := mul(x, wk[h]) // (N, d)
		v := mul(x, wv[h]) // (N, d)
		logits := zeros(n, n)
		for i := range n {
			for j := range n {
				s := 0.0
				for c := range d {
					s += q[i][c] * k[j][c]
				}
				logits[i][j] = s * scale
			}
		}
		p, err := Softmax(logits, causal) // (N, N)
		if err != nil {
			return nil, err
		}
		out[h] = matmul(p, v)
	}
	return concatProject(out, wo), nil
}
