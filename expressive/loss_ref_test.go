package expressive

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// refLoss is the gd loss of loss.go written directly in plain Go on the logits z, with its
// gradient with respect to z derived by hand: the reference the Gorgonia graph is tested
// against. // z, grad: (L, L)
func refLoss(z *mat.Dense, t *Target, eps float64) (float64, *mat.Dense) {
	a, b := math.Log1p(eps), -math.Log(eps)
	grad := mat.NewDense(t.L, t.L, nil)
	var loss float64
	for i, row := range t.Rows {
		zi, gi := z.RawRowView(i), grad.RawRowView(i)
		var ubar float64
		for _, e := range row {
			ubar += zi[e.Col] - math.Log(e.Val)
		}
		ubar /= float64(len(row))
		for _, e := range row {
			r := (zi[e.Col] - math.Log(e.Val) - ubar) / a
			loss += r * r
			// The ubar term of the derivative sums to zero over the support.
			gi[e.Col] += 2 * r / a
		}
		next := 0
		for j, v := range zi {
			if next < len(row) && row[next].Col == j {
				next++
				continue
			}
			for _, e := range row {
				sp, sg := refSoftplusSigmoid((v - zi[e.Col] + b) / a)
				loss += sp
				gi[j] += sg / a
				gi[e.Col] -= sg / a
			}
		}
	}
	inv := 1 / float64(t.L)
	grad.Scale(inv, grad)
	return loss * inv, grad
}

// refLossX is refLoss at the logits of module m on x, with the gradient back-propagated
// by hand to x through Z = Q K^T, Q = X W_Q, K = X W_K. // x, grad: (L, n)
func refLossX(m *Module, x *mat.Dense, t *Target, eps float64) (float64, *mat.Dense) {
	L, n := x.Dims()
	d := m.HeadWidth()
	q, k := mat.NewDense(L, d, nil), mat.NewDense(L, d, nil) // (L, d)
	q.Mul(x, m.WQ)
	k.Mul(x, m.WK)
	z := mat.NewDense(L, L, nil)
	z.Mul(q, k.T())
	loss, gz := refLoss(z, t, eps)
	dq, dk := mat.NewDense(L, d, nil), mat.NewDense(L, d, nil) // (L, d)
	dq.Mul(gz, k)
	dk.Mul(gz.T(), q)
	grad := mat.NewDense(L, n, nil)
	grad.Mul(dq, m.WQ.T())
	var tmp mat.Dense
	tmp.Mul(dk, m.WK.T())
	grad.Add(grad, &tmp)
	return loss, grad
}

// refSoftplusSigmoid returns softplus(x) = log(1 + e^x) and its derivative sigmoid(x) =
// 1 / (1 + e^-x), from one exponential and without overflow.
func refSoftplusSigmoid(x float64) (sp, sg float64) {
	e := math.Exp(-math.Abs(x))
	if x >= 0 {
		return x + math.Log1p(e), 1 / (1 + e)
	}
	return math.Log1p(e), e / (1 + e)
}
