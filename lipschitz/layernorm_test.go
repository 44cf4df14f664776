package lipschitz

import (
	"math"
	"math/rand/v2"
	"testing"

	"lipformer/internal/ref"
)

// layerNormJacobian measures the (D, D) Jacobian of one LayerNorm'd token.
func layerNormJacobian(t *testing.T, gamma []float64, eps float64, x []float64) (inf, two float64) {
	t.Helper()
	beta := make([]float64, len(gamma))
	f := seqMap(t, 1, len(gamma), func(x [][]float64) ([][]float64, error) {
		return ref.LayerNorm(x, gamma, beta, eps)
	})
	j := mustJacobian(t, f, x, 1e-4*math.Sqrt(eps))
	return JacobianNormInf(j), JacobianNorm2(j)
}

// fdSlack covers the central-difference error: the step is 1e-4 of the
// smallest length scale sqrt(eps), so the relative error is about 1e-8.
const fdSlack = 1e-6

// At a near-constant input the measured norms reach the constants: exactly
// for the inf-norm, and for the 2-norm when all |gamma_k| are equal.
func TestLayerNormLipAttainedAtConstantInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const eps = 1e-2
	for _, dim := range []int{2, 3, 8} {
		gamma := randVec(rng, dim, 2)
		signs := make([]float64, dim)
		for k := range signs {
			signs[k] = 1.7 * math.Copysign(1, rng.NormFloat64())
		}
		x := randVec(rng, dim, 1e-6*math.Sqrt(eps))
		for k := range x {
			x[k] += 3
		}
		bound, err := LayerNormLipInf(gamma, eps)
		if err != nil {
			t.Fatal(err)
		}
		if inf, _ := layerNormJacobian(t, gamma, eps, x); math.Abs(inf-bound) > fdSlack*bound {
			t.Errorf("D=%d: ||J||_inf = %.12g at a constant input, want LayerNormLipInf = %.12g", dim, inf, bound)
		}
		bound, err = LayerNormLip2(signs, eps)
		if err != nil {
			t.Fatal(err)
		}
		if _, two := layerNormJacobian(t, signs, eps, x); math.Abs(two-bound) > fdSlack*bound {
			t.Errorf("D=%d: ||J||_2 = %.12g at a constant input, want LayerNormLip2 = %.12g", dim, two, bound)
		}
	}
}

// At inputs of every spread around sqrt(eps) the measured norms stay below
// the constants.
func TestLayerNormLipNeverExceeded(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	const eps = 1e-2
	worstInf, worst2 := 0.0, 0.0
	for trial := range 400 {
		dim := 2 + trial%7
		gamma := randVec(rng, dim, 1)
		spread := math.Sqrt(eps) * math.Pow(10, -3+5*rng.Float64())
		x := randVec(rng, dim, spread)
		lipInf, err := LayerNormLipInf(gamma, eps)
		if err != nil {
			t.Fatal(err)
		}
		lip2, err := LayerNormLip2(gamma, eps)
		if err != nil {
			t.Fatal(err)
		}
		inf, two := layerNormJacobian(t, gamma, eps, x)
		if inf > lipInf*(1+fdSlack) || two > lip2*(1+fdSlack) {
			t.Fatalf("D=%d gamma=%v x=%v: ||J||_inf = %v (bound %v), ||J||_2 = %v (bound %v)", dim, gamma, x, inf, lipInf, two, lip2)
		}
		worstInf, worst2 = math.Max(worstInf, inf/lipInf), math.Max(worst2, two/lip2)
	}
	t.Logf("largest measured/constant: inf %.6f, 2 %.6f", worstInf, worst2)
}

func TestLayerNormLipErrors(t *testing.T) {
	for name, c := range map[string]struct {
		gamma []float64
		eps   float64
	}{
		"empty gamma":  {nil, 1e-5},
		"eps = 0":      {[]float64{1}, 0},
		"eps < 0":      {[]float64{1}, -1},
		"eps NaN":      {[]float64{1}, math.NaN()},
		"gamma NaN":    {[]float64{1, math.NaN()}, 1e-5},
		"gamma is Inf": {[]float64{math.Inf(-1)}, 1e-5},
	} {
		if _, err := LayerNormLip2(c.gamma, c.eps); err == nil {
			t.Errorf("LayerNormLip2 %s: want error", name)
		}
		if _, err := LayerNormLipInf(c.gamma, c.eps); err == nil {
			t.Errorf("LayerNormLipInf %s: want error", name)
		}
	}
}
