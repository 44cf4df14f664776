package expressive

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Loss is the smooth surrogate of the precision measures minimised by the gd method. With
// a = log(1 + eps), b = log(1/eps), u_ij = z_ij - log A_ij and ubar_i the mean of u_i over
// the support S_i, it is the mean over rows i of
//
//	sum_{j in S_i} ((u_ij - ubar_i) / a)^2                                  (ratio errors)
//	+ sum_{j' in S_i} sum_{j not in S_i} softplus((z_ij - z_ij' + b) / a)      (leak)
//
// The first term is zero exactly when every ratio inside the support is right; each leak
// term is below log 2 exactly when that pair meets the leak condition, and keeps pushing
// (with slope decaying like e^{(z_ij - z_ij' + b)/a}) beyond it, which buys a margin.
// It returns the loss and its gradient with respect to the logits z. // z, grad: (L, L)
func Loss(z *mat.Dense, t *Target, eps float64) (float64, *mat.Dense) {
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
				sp, sg := softplusSigmoid((v - zi[e.Col] + b) / a)
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

// softplusSigmoid returns softplus(x) = log(1 + e^x) and its derivative sigmoid(x) =
// 1 / (1 + e^-x), from one exponential and without overflow.
func softplusSigmoid(x float64) (sp, sg float64) {
	e := math.Exp(-math.Abs(x))
	if x >= 0 {
		return x + math.Log1p(e), 1 / (1 + e)
	}
	return math.Log1p(e), e / (1 + e)
}
