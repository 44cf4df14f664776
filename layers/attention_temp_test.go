package layers

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
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

// Contractive L2 attention under the product bound, with and without temperatures: the
// scale its graph applies, measured as the ratio of its output to the output of the same
// layer with LipC = 0, is c / UB for the product bound UB computed here at the weights it
// applies, W^{Q,h} e^{s_h} and W^{V,h} e^{-2 s_h}; Scale reports that scale; its certified
// constant LipschitzInf is that scale times the smaller of Kim et al.'s and the product
// bound at those weights; and the exact Jacobian has an inf-norm of at most the certified
// constant at random inputs of every scale.
func TestProductContractionIsContractive(t *testing.T) {
	const n, c = 8, 0.9
	for _, temp := range [][]float64{nil, {1.5, -1}} {
		a := newTempAttention(t, 1, 11, temp...)
		if temp == nil {
			a.LogTemp = nil
		}
		a.LipC, a.BoundLen, a.Bound = c, n, ops.BoundProduct
		kim, product := appliedInfBounds(t, a, temp, n)
		scale := graphScale(t, a, n)
		if math.Abs(scale-c/product) > 1e-12*scale {
			t.Errorf("temperatures %v: the graph scales the output by %.15g, want c / UB = %.15g", temp, scale, c/product)
		}
		if s, err := a.Scale(); err != nil || math.Abs(s-scale) > 1e-12*scale {
			t.Errorf("temperatures %v: Scale %.15g (%v), the graph applies %.15g", temp, s, err, scale)
		}
		cert, err := a.LipschitzInf(n)
		if want := scale * min(kim, product); err != nil || math.Abs(cert-want) > 1e-12*want {
			t.Errorf("temperatures %v: certified %.15g (%v), want the graph's scale times min(Kim, product) = %.15g", temp, cert, err, want)
		}
		if !(scale < 0.5) {
			t.Fatalf("scale %v: want weights whose bound is far above c", scale)
		}
		jac := newJacobian(t, a, n, 6)
		for i := range 40 {
			j := jac.at(t, gradcheck.Rand(uint64(600+i), []float64{0.1, 1, 10, 100}[i%4], n, 6).Data().([]float64))
			if inf := lipschitz.JacobianNormInf(j); inf > cert {
				t.Fatalf("temperatures %v, input %d: ||J||_inf = %v > certified %v", temp, i, inf, cert)
			}
		}
	}
}

// headCopies are a layer's parameters copied whole (denseOf) and cut into heads by
// lipschitz.HeadSlices: the per-head W^Q and W^V, and W^O.
func headCopies(t *testing.T, a *Attention) (wq, wv []*mat.Dense, wo *mat.Dense) {
	t.Helper()
	var err error
	if wq, err = lipschitz.HeadSlices(denseOf(a.WQ), a.Heads); err != nil {
		t.Fatal(err)
	}
	if wv, err = lipschitz.HeadSlices(denseOf(a.WV), a.Heads); err != nil {
		t.Fatal(err)
	}
	return wq, wv, denseOf(a.WO)
}

// appliedInfBounds are Kim et al.'s and the product inf-norm bounds for n tokens at the
// weights a layer applies with log-temperatures temp (nil for none), built here from its
// parameters: head h's W^Q times e^{s_h}, its W^V times e^{-2 s_h}.
func appliedInfBounds(t *testing.T, a *Attention, temp []float64, n int) (kim, product float64) {
	t.Helper()
	wq, wv, wo := headCopies(t, a)
	for h, s := range temp {
		wq[h].Scale(math.Exp(s), wq[h])
		wv[h].Scale(math.Exp(-2*s), wv[h])
	}
	var err error
	if kim, err = lipschitz.L2MHABoundInf(n, wq, wv, wo); err != nil {
		t.Fatal(err)
	}
	if product, err = lipschitz.L2MHABoundInfProduct(n, wq, wv, wo); err != nil {
		t.Fatal(err)
	}
	return kim, product
}

// graphScale is the factor by which a contractive layer's graph scales its output on
// sequences of n tokens: its output over that of the layer with LipC = 0, the same at every
// element of a random input.
func graphScale(t *testing.T, a *Attention, n int) float64 {
	t.Helper()
	x := gradcheck.Rand(41, 1, n, a.WQ.Value.Shape()[0])
	contracted := forward(t, x, 1, n, a.Forward)
	c := a.LipC
	a.LipC = 0
	plain := forward(t, x, 1, n, a.Forward)
	a.LipC = c
	scale := contracted[0][0] / plain[0][0]
	for i, row := range plain {
		for j, v := range row {
			if d := contracted[i][j] - scale*v; math.Abs(d) > 1e-12*math.Abs(v)+1e-15 {
				t.Fatalf("output [%d,%d] is %.17g, %.17g times the plain %.17g: not one scale", i, j, contracted[i][j], contracted[i][j]/v, v)
			}
		}
	}
	return scale
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

// setDiagonalHeads gives each head h of a tied L2 layer of width D = H (d = 1) the query,
// value and output maps e_h e_h^T: head h attends over feature h and writes it, so the
// Jacobian is block-diagonal over the features and its inf-norm is the largest head's.
// One head of identity weights is the case in which the inf-norm bounds are nearly tight.
func setDiagonalHeads(a *Attention) {
	dim := a.WQ.Value.Shape()[0]
	for _, p := range []*Param{a.WQ, a.WV, a.WO} {
		w := p.Value.Data().([]float64)
		clear(w)
		for h := range dim {
			w[h*dim+h] = 1
		}
	}
}

// worstTwoCluster is the largest norm (size) of the Jacobian of jac over inputs of two clusters,
// k of the n tokens at r (1, ..., 1) and the others at 0, for k from 1 to n-1 and r from
// 0.01 to 300 in steps of 5%, refined by 40 steps of gradient ascent from the best one.
func worstTwoCluster(t *testing.T, jac *jacobian, n, d int, size func(*mat.Dense) float64) float64 {
	t.Helper()
	f := func(x []float64) float64 { return size(jac.at(t, x)) }
	var best []float64
	fb := math.Inf(-1)
	for k := 1; k < n; k++ {
		for r := 0.01; r < 300; r *= 1.05 {
			x := make([]float64, n*d)
			for i := range x[(n-k)*d:] {
				x[(n-k)*d+i] = r
			}
			if v := f(x); v > fb {
				best, fb = x, v
			}
		}
	}
	_, fb = ascend(f, best, 40, 0.1*math.Max(1, norm(best)))
	return fb
}

// TestTemperedCertificateHoldsAndIsTight: the certificates of a non-contractive tied L2
// layer with per-head temperatures, LipschitzInf and Lipschitz2, are taken at the weights it
// applies, W^{Q,h} e^{s_h} and W^{V,h} e^{-2 s_h} (docs/math.md, "Temperature"). For
// diagonal heads (D = H = 2, N = 4) at high temperatures (s = -2, -3: head h's worst inputs
// are e^{-s_h} times farther apart) and low ones (s = 1, 2), the largest Jacobian norm over
// two-cluster inputs and ascent stays below each certificate and reaches more than half the
// inf-norm one and 0.15 of the 2-norm one, which it does without temperatures. A certificate
// with W^{V,h} e^{-s_h} would be e^{s_h} times the right one per head: exceeded at high
// temperatures, and loose at low ones.
func TestTemperedCertificateHoldsAndIsTight(t *testing.T) {
	const n, dim = 4, 2
	for _, temp := range [][]float64{{-2, -3}, {1, 2}, {0, 0}} {
		a, err := NewAttention("attn", ops.L2, dim, dim, false, 1, 1, tensor.Float64, rng(1))
		if err != nil {
			t.Fatal(err)
		}
		if err := a.AddTemperature("attn"); err != nil {
			t.Fatal(err)
		}
		setDiagonalHeads(a)
		copy(a.LogTemp.Value.Data().([]float64), temp)
		jac := newJacobian(t, a, n, dim)
		for _, c := range []struct {
			name  string
			cert  func(int) (float64, error)
			norm  func(*mat.Dense) float64
			tight float64
		}{
			{"inf", a.LipschitzInf, func(j *mat.Dense) float64 { return lipschitz.JacobianNormInf(j) }, 0.5},
			{"2", a.Lipschitz2, func(j *mat.Dense) float64 { return lipschitz.JacobianNorm2(j) }, 0.15},
		} {
			cert, err := c.cert(n)
			if err != nil {
				t.Fatal(err)
			}
			got := worstTwoCluster(t, jac, n, dim, c.norm)
			if got > cert {
				t.Errorf("temperatures %v: ||J||_%s = %.10g above the certified %.10g (ratio %.3f)", temp, c.name, got, cert, got/cert)
			} else if got < c.tight*cert {
				t.Errorf("temperatures %v: ||J||_%s reaches %.10g, under %g of the certified %.10g (ratio %.3f)", temp, c.name, got, c.tight, cert, got/cert)
			}
			t.Logf("temperatures %v: largest ||J||_%s %.6g, certified %.6g, ratio %.3f", temp, c.name, got, cert, got/cert)
		}
	}
}
