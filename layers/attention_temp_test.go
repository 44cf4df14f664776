package layers

import (
	"fmt"
	"math"
	"testing"

	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/lipschitz"
	"lipformer/ops"
)

// newTempAttention is a float64 tied L2 layer of width 6, 2 heads, with log-temperatures s.
func newTempAttention(t *testing.T, std float64, seed uint64, s ...float64) *Attention {
	t.Helper()
	a, err := NewAttention("attn", ops.L2, 6, 2, true, std, std, tensor.Float64, rng(seed))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.AddTemperature("attn"); err != nil {
		t.Fatal(err)
	}
	copy(a.LogTemp.Value.Data().([]float64), s)
	return a
}

// A layer with temperatures computes tied L2 attention of W^{Q,h} exp(s_h) and
// W^{V,h} exp(-2 s_h): the plain-Go reference on those weights.
func TestTemperatureForwardMatchesReference(t *testing.T) {
	a := newTempAttention(t, 0.5, 5, 0.7, -0.4)
	plain, err := NewAttention("plain", ops.L2, 6, 2, true, 0.5, 0.5, tensor.Float64, rng(5))
	if err != nil {
		t.Fatal(err)
	}
	q, v := plain.WQ.Value.Data().([]float64), plain.WV.Value.Data().([]float64)
	for i := range q {
		s := a.LogTemp.Value.Data().([]float64)[(i%6)/3]
		q[i] *= math.Exp(s)
		v[i] *= math.Exp(-2 * s)
	}
	x := gradcheck.Rand(2, 1, 2*5, 6)
	assertRows(t, "temperature", forward(t, x, 2, 5, a.Forward), refAttention(t, plain, rowsOf(x), 5), 1e-12)
	if got := forward(t, x, 2, 5, a.Forward); math.Abs(got[0][0]-forward(t, x, 2, 5, plain.Forward)[0][0]) > 1e-12 {
		t.Fatal("the layer's own weights and the scaled copy differ")
	}
}

func TestTemperatureGradient(t *testing.T) {
	for _, form := range []ops.BoundForm{ops.BoundKim, ops.BoundProduct} {
		for _, c := range []float64{0, 0.9} {
			a := newTempAttention(t, 0.8, 3, 0.3, -0.5)
			a.LipC, a.BoundLen, a.Bound = c, 4, form
			if s, err := a.Scale(); err != nil || (c > 0 && !(s < 1)) {
				t.Fatalf("scale %v (%v): want the contraction to act", s, err)
			}
			checkGrad(t, fmt.Sprintf("%v c=%v", form, c), a.Params(), gradcheck.Rand(4, 1, 2*4, 6), 2, 4, a.Forward)
		}
	}
}

// Contractive L2 attention under the product bound, with and without temperatures, has an
// exact Jacobian of inf-norm at most c at random inputs of every scale; and its certified
// constant, LipschitzInf, is at most c.
func TestProductContractionIsContractive(t *testing.T) {
	const n, c = 8, 0.9
	for _, temp := range [][]float64{nil, {1.5, -1}} {
		a := newTempAttention(t, 1, 11, temp...)
		if temp == nil {
			a.LogTemp = nil
		}
		a.LipC, a.BoundLen, a.Bound = c, n, ops.BoundProduct
		if s, err := a.LipschitzInf(n); err != nil || s > c*(1+1e-12) {
			t.Fatalf("certified %v (%v), want <= %v", s, err, c)
		}
		if s, _ := a.Scale(); !(s < 0.5) {
			t.Fatalf("scale %v: want weights whose bound is far above c", s)
		}
		jac := newJacobian(t, a, n, 6)
		for i := range 40 {
			j := jac.at(t, gradcheck.Rand(uint64(600+i), []float64{0.1, 1, 10, 100}[i%4], n, 6).Data().([]float64))
			if inf := lipschitz.JacobianNormInf(j); inf > c {
				t.Fatalf("temperatures %v, input %d: ||J||_inf = %v > c = %v", temp, i, inf, c)
			}
		}
	}
}

func TestAddTemperatureNeedsTiedL2(t *testing.T) {
	a, err := NewAttention("attn", ops.DotProduct, 6, 2, true, 0.5, 0.5, tensor.Float64, rng(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.AddTemperature("attn"); err == nil {
		t.Fatal("dp attention took a temperature")
	}
}

func TestTok2ContractionGradient(t *testing.T) {
	a := newTempAttention(t, 0.8, 3, 0.3, -0.5)
	a.LipC, a.BoundLen, a.Bound = 0.9, 4, ops.BoundTok2
	a.AddPower("attn")
	if s, err := a.Scale(); err != nil || !(s < 1) {
		t.Fatalf("scale %v (%v): want the contraction to act", s, err)
	}
	checkGrad(t, "token2", a.Params(), gradcheck.Rand(4, 1, 2*4, 6), 2, 4, a.Forward)
}

// Contractive L2 attention under the token-norm bound, with and without temperatures:
// its certified token-norm constant is at most c once the power iteration has converged,
// and the exact Jacobian's token norm stays below it at random inputs of every scale.
func TestTok2ContractionIsContractive(t *testing.T) {
	const n, c = 8, 0.9
	for _, temp := range [][]float64{nil, {1.5, -1}} {
		a := newTempAttention(t, 1, 11, temp...)
		if temp == nil {
			a.LogTemp = nil
		}
		a.LipC, a.BoundLen, a.Bound = c, n, ops.BoundTok2
		a.AddPower("attn")
		cert, err := a.LipschitzTok2(n)
		if err != nil || cert > c*(1+1e-9) {
			t.Fatalf("certified %v (%v), want <= %v", cert, err, c)
		}
		if s, _ := a.Scale(); !(s < 0.5) {
			t.Fatalf("scale %v: want weights whose bound is far above c", s)
		}
		jac := newJacobian(t, a, n, 6)
		for i := range 40 {
			j := jac.at(t, gradcheck.Rand(uint64(700+i), []float64{0.1, 1, 10, 100}[i%4], n, 6).Data().([]float64))
			got, err := lipschitz.JacobianNormTok2(j, n, 30)
			if err != nil {
				t.Fatal(err)
			}
			if got > cert {
				t.Fatalf("temperatures %v, input %d: token norm of J %v > certified %v", temp, i, got, cert)
			}
		}
	}
}

// newBiasedAttention is newTempAttention with a random position bias over t offsets.
func newBiasedAttention(t *testing.T, std float64, seed uint64, ctx int, s ...float64) *Attention {
	t.Helper()
	a := newTempAttention(t, std, seed, s...)
	if err := a.AddPositionBias("attn", ctx); err != nil {
		t.Fatal(err)
	}
	copy(a.PosBias.Value.Data().([]float64), gradcheck.Rand(seed+1, 1.5, a.Heads, ctx).Data().([]float64))
	return a
}

func TestPositionBiasForwardMatchesReference(t *testing.T) {
	a := newBiasedAttention(t, 0.5, 5, 7) // a bias over 7 offsets, sequences of 5; temperatures 0
	x := gradcheck.Rand(2, 1, 2*5, 6)
	assertRows(t, "position bias", forward(t, x, 2, 5, a.Forward), refAttention(t, a, rowsOf(x), 5), 1e-12)
}

func TestPositionBiasGradient(t *testing.T) {
	for _, c := range []float64{0, 0.9} {
		a := newBiasedAttention(t, 0.8, 3, 4, 0.3, -0.5)
		if c > 0 {
			a.LipC, a.BoundLen, a.Bound = c, 4, ops.BoundTok2
			a.AddPower("attn")
			if s, err := a.Scale(); err != nil || !(s < 1) {
				t.Fatalf("scale %v (%v): want the contraction to act", s, err)
			}
		}
		checkGrad(t, fmt.Sprintf("position bias c=%v", c), a.Params(), gradcheck.Rand(4, 1, 2*4, 6), 2, 4, a.Forward)
	}
}

// With a position bias the certified token-norm constant of a contractive layer is at most
// c, its certified inf-norm constant is the biased product bound times the scale, and the
// exact Jacobian stays below both; the inf-norm forms cannot be the divisor.
func TestPositionBiasContraction(t *testing.T) {
	const n, c = 8, 0.9
	a := newBiasedAttention(t, 1, 11, n, 1.5, -1)
	pb := a.PosBias.Value.Data().([]float64)
	pb[1], pb[n+2] = 4, 3 // heads that favour the previous token and the one before it
	a.LipC, a.BoundLen, a.Bound = c, n, ops.BoundTok2
	a.AddPower("attn")
	cert, err := a.LipschitzTok2(n)
	if err != nil || cert > c*(1+1e-9) {
		t.Fatalf("certified %v (%v), want <= %v", cert, err, c)
	}
	jac := newJacobian(t, a, n, 6)
	for i := range 40 {
		j := jac.at(t, gradcheck.Rand(uint64(800+i), []float64{0.1, 1, 10, 100}[i%4], n, 6).Data().([]float64))
		got, err := lipschitz.JacobianNormTok2(j, n, 30)
		if err != nil {
			t.Fatal(err)
		}
		if got > cert {
			t.Fatalf("input %d: token norm of J %v > certified %v", i, got, cert)
		}
	}
	inf, err := a.LipschitzInf(n) // the product bound with the bias, times the scale
	if err != nil || math.IsInf(inf, 1) {
		t.Fatalf("inf-norm constant with a bias %v (%v), want finite", inf, err)
	}
	if kim, err := a.RawBound(ops.BoundKim, n); err != nil || !math.IsInf(kim, 1) {
		t.Errorf("Kim et al.'s bound with a bias %v (%v), want +Inf (not derived)", kim, err)
	}
	for i := range 20 {
		j := jac.at(t, gradcheck.Rand(uint64(900+i), []float64{0.1, 1, 10, 100}[i%4], n, 6).Data().([]float64))
		if got := lipschitz.JacobianNormInf(j); got > inf {
			t.Fatalf("input %d: ||J||_inf %v > certified %v", i, got, inf)
		}
	}
	a.Bound = ops.BoundProduct
	if _, err := a.Scale(); err == nil {
		t.Error("the product bound took a position bias")
	}
}

// The token2 bound is taken at the weights before the temperatures: it does not move with
// them, while the bound at the tempered weights would (heads' N_h scale apart).
func TestTok2BoundIgnoresTemperatures(t *testing.T) {
	a := newTempAttention(t, 0.7, 21)
	before, err := a.RawBound(ops.BoundTok2, 8)
	if err != nil {
		t.Fatal(err)
	}
	copy(a.LogTemp.Value.Data().([]float64), []float64{1.5, -1})
	after, err := a.RawBound(ops.BoundTok2, 8)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(after-before) > 1e-12*before {
		t.Errorf("token2 bound %v with temperatures, %v without", after, before)
	}
	wq, wv, wo, err := a.boundWeights()
	if err != nil {
		t.Fatal(err)
	}
	tempered, err := lipschitz.L2MHABoundTok2(8, wq, wv, wo)
	if err != nil {
		t.Fatal(err)
	}
	if !(tempered > 1.5*before) {
		t.Errorf("the bound at the tempered weights %v, want well above %v", tempered, before)
	}
}
