package layers

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"lipformer/ops"
)

// BalanceL2Values rescales each head's value map W^{V,h} (D, d) of tied L2 attention so that
// the map the head applies to its input, A_h W^{V,h} with A_h = W^{Q,h} W^{Q,h}^T / sqrt(d),
// has the Frobenius norm W^{V,h} had: the value path then starts at the scale of dot-product
// attention's X W^{V,h}. With GPT-2's N(0, 0.02^2) initialisation A_h is of order
// D std^2 / sqrt(d), about 1e-2 at D = 128, so without this the L2 value path starts about a
// hundred times weaker than DP's. It changes no logits; call it once, after initialisation.
// It returns the scale applied to each head.
func (a *Attention) BalanceL2Values() ([]float64, error) {
	if a.Kind != ops.L2 || a.WK != nil {
		return nil, fmt.Errorf("%s: balancing value maps needs tied L2 attention, got %v", a.WQ.Name, a.Kind)
	}
	wq, wv := denseOf(a.WQ), denseOf(a.WV) // (D, D) each, head h in columns h*d..(h+1)*d
	rows, cols := wq.Dims()
	d := cols / a.Heads
	scales := make([]float64, a.Heads)
	for h := range scales {
		q := wq.Slice(0, rows, h*d, (h+1)*d) // (D, d)
		v := wv.Slice(0, rows, h*d, (h+1)*d) // (D, d)
		var qtv, av mat.Dense
		qtv.Mul(q.T(), v) // (d, d)
		av.Mul(q, &qtv)   // (D, d): sqrt(d) A_h W^{V,h}
		eff := mat.Norm(&av, 2) / math.Sqrt(float64(d))
		if !(eff > 0) || math.IsInf(eff, 0) {
			return nil, fmt.Errorf("%s: head %d's value map has norm %v, cannot balance it", a.WV.Name, h, eff)
		}
		scales[h] = mat.Norm(v, 2) / eff
	}
	a.WV.scaleColumnBlocks(d, scales)
	return scales, nil
}
