package ops

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/lipschitz"
)

func TestL2BoundsMatchLipschitzPackage(t *testing.T) {
	for _, form := range []BoundForm{BoundKim, BoundProduct} {
		for _, h := range []int{1, 2, 4} {
			wq, wv, wo := gradcheck.Rand(1, 1, 8, 8), gradcheck.Rand(2, 1, 8, 8), gradcheck.Rand(3, 1, 8, 8)
			g := G.NewGraph()
			n := func(x *tensor.Dense, name string) *G.Node { return G.NodeFromAny(g, x, G.WithName(name)) }
			ub, err := l2Bound(n(wq, "wq"), n(wv, "wv"), n(wo, "wo"), h, lipschitz.PhiInv(16), form)
			if err != nil {
				t.Fatal(err)
			}
			runGraph(t, g)
			split := func(x *tensor.Dense) []*mat.Dense {
				s, err := lipschitz.HeadSlices(mat.NewDense(8, 8, x.Data().([]float64)), h)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			bound := lipschitz.L2MHABoundInf
			if form == BoundProduct {
				bound = lipschitz.L2MHABoundInfProduct
			}
			want, err := bound(16, split(wq), split(wv), mat.NewDense(8, 8, wo.Data().([]float64)))
			if err != nil {
				t.Fatal(err)
			}
			if got := ub.Value().Data().(float64); math.Abs(got-want) > 1e-12*want {
				t.Errorf("%v H=%d: graph bound %.17g, lipschitz package %.17g", form, h, got, want)
			}
		}
	}
}

// The float32 product bound agrees with the float64 one to float32 rounding of the weights.
func TestL2BoundProductFloat32(t *testing.T) {
	w := []*tensor.Dense{gradcheck.Rand(11, 1, 8, 8), gradcheck.Rand(12, 1, 8, 8), gradcheck.Rand(13, 1, 8, 8)}
	w32 := make([][]float32, 3)
	for i, x := range w {
		for _, v := range x.Data().([]float64) {
			w32[i] = append(w32[i], float32(v))
		}
	}
	b64 := l2ProductFactors(w[0].Data().([]float64), w[1].Data().([]float64), w[2].Data().([]float64), 8, 2, 1.7)
	b32 := l2ProductFactors(w32[0], w32[1], w32[2], 8, 2, 1.7)
	if math.Abs(b32.value()-b64.value()) > 1e-6*b64.value() {
		t.Errorf("float32 bound %v, float64 %v", b32.value(), b64.value())
	}
}

func TestL2BoundInfGradient(t *testing.T) {
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return L2BoundInf(in[0], in[1], in[2], 2, lipschitz.PhiInv(32))
	}, []gradcheck.Input{
		{Name: "wq", Value: gradcheck.Rand(4, 1, 6, 6)},
		{Name: "wv", Value: gradcheck.Rand(5, 1, 6, 6)},
		{Name: "wo", Value: gradcheck.Rand(6, 1, 6, 6)},
	}, 1, 1e-6)
	assertGrad(t, "l2 bound", res, err)
}

func TestL2BoundInfProductGradient(t *testing.T) {
	for _, h := range []int{1, 2, 3} {
		res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
			return L2BoundInfProduct(in[0], in[1], in[2], h, lipschitz.PhiInv(32))
		}, []gradcheck.Input{
			{Name: "wq", Value: gradcheck.Rand(uint64(14+h), 1, 6, 6)},
			{Name: "wv", Value: gradcheck.Rand(uint64(24+h), 1, 6, 6)},
			{Name: "wo", Value: gradcheck.Rand(uint64(34+h), 1, 6, 6)},
		}, 1, 1e-6)
		assertGrad(t, fmt.Sprintf("l2 product bound H=%d", h), res, err)
	}
}

// TestContractGradient covers both regimes: c/ub < 1 (scaled, gradient reaches the bound)
// and c/ub > 1 (identity, no gradient to the bound).
func TestContractGradient(t *testing.T) {
	for _, ub := range []float64{3, 0.2} {
		ubT := tensor.New(tensor.WithShape(), tensor.WithBacking([]float64{ub}))
		res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
			return Contract(in[0], in[1], 0.9)
		}, []gradcheck.Input{{Name: "x", Value: gradcheck.Rand(7, 1, 4, 3)}, {Name: "ub", Value: ubT}}, 2, 1e-6)
		assertGrad(t, "contract", res, err)
	}
}

func TestContractScales(t *testing.T) {
	x := gradcheck.Rand(8, 1, 2, 3)
	for _, c := range []struct{ ub, scale float64 }{{3, 0.3}, {0.5, 1}} {
		got := run1(t, x, func(n *G.Node) (*G.Node, error) {
			return Contract(n, G.NewScalar(n.Graph(), tensor.Float64, G.WithValue(c.ub), G.WithName("ub")), 0.9)
		})
		for i, v := range x.Data().([]float64) {
			if math.Abs(got[i]-c.scale*v) > 1e-15 {
				t.Fatalf("ub %v: got %v want %v", c.ub, got[i], c.scale*v)
			}
		}
	}
}

func TestHeadScaleForward(t *testing.T) {
	w := gradcheck.Rand(40, 1, 3, 4)
	s := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{0.3, -0.7}))
	g := G.NewGraph()
	y, err := HeadScale(G.NodeFromAny(g, w, G.WithName("w")), G.NodeFromAny(g, s, G.WithName("s")), -2)
	if err != nil {
		t.Fatal(err)
	}
	runGraph(t, g)
	got, wd := y.Value().Data().([]float64), w.Data().([]float64)
	for i := range 3 {
		for j := range 4 {
			want := wd[i*4+j] * math.Exp(-2*[]float64{0.3, -0.7}[j/2])
			if math.Abs(got[i*4+j]-want) > 1e-15*math.Abs(want) {
				t.Errorf("(%d, %d): %v, want %v", i, j, got[i*4+j], want)
			}
		}
	}
}

// TestHeadScaleGradient: the gradients of HeadScale against central differences, for three
// heads and for one (the MLP gain's, which scales and sums whole matrices).
func TestHeadScaleGradient(t *testing.T) {
	for _, heads := range []int{3, 1} {
		for _, p := range []float64{1, -2} {
			res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				return HeadScale(in[0], in[1], p)
			}, []gradcheck.Input{
				{Name: "w", Value: gradcheck.Rand(41, 1, 4, 6)},
				{Name: "s", Value: gradcheck.Rand(42, 0.5, heads)},
			}, 1, 1e-6)
			assertGrad(t, fmt.Sprintf("head scale, %d heads, p=%v", heads, p), res, err)
		}
	}
}

// The product bound is invariant under a per-head temperature: HeadScale by s on W^Q and by
// -2s on W^V leaves it unchanged, while Kim et al.'s bound moves for several heads.
func TestL2BoundProductTemperatureInvariant(t *testing.T) {
	wq, wv, wo := gradcheck.Rand(43, 1, 8, 8), gradcheck.Rand(44, 1, 8, 8), gradcheck.Rand(45, 1, 8, 8)
	s := tensor.New(tensor.WithShape(4), tensor.WithBacking([]float64{0.9, -1.3, 0.2, 2}))
	bounds := func(temp bool) (kim, product float64) {
		g := G.NewGraph()
		q, v, o := G.NodeFromAny(g, wq.Clone().(*tensor.Dense), G.WithName("wq")), G.NodeFromAny(g, wv.Clone().(*tensor.Dense), G.WithName("wv")), G.NodeFromAny(g, wo, G.WithName("wo"))
		if temp {
			sn := G.NodeFromAny(g, s, G.WithName("s"))
			var err error
			if q, err = HeadScale(q, sn, 1); err != nil {
				t.Fatal(err)
			}
			if v, err = HeadScale(v, sn, -2); err != nil {
				t.Fatal(err)
			}
		}
		k, err := L2BoundInf(q, v, o, 4, 2)
		if err != nil {
			t.Fatal(err)
		}
		p, err := L2BoundInfProduct(q, v, o, 4, 2)
		if err != nil {
			t.Fatal(err)
		}
		runGraph(t, g)
		return k.Value().Data().(float64), p.Value().Data().(float64)
	}
	k0, p0 := bounds(false)
	k1, p1 := bounds(true)
	if math.Abs(p1-p0) > 1e-12*p0 {
		t.Errorf("product bound %v with temperatures, %v without", p1, p0)
	}
	if math.Abs(k1-k0) < 1e-3*k0 {
		t.Errorf("Kim et al.'s bound %v with temperatures, %v without: expected them to differ", k1, k0)
	}
}

// topPair returns the top singular pair (u, v) of a (rows, cols) matrix.
func topPair(t *testing.T, w *mat.Dense) (u, v []float64) {
	t.Helper()
	var svd mat.SVD
	if !svd.Factorize(w, mat.SVDThin) {
		t.Fatal("SVD failed")
	}
	var um, vm mat.Dense
	svd.UTo(&um)
	svd.VTo(&vm)
	return mat.Col(nil, 0, &um), mat.Col(nil, 0, &vm)
}

// tok2Vectors returns the exact power-iteration fixed points of the token-norm bound for
// (D, D) weights with h heads: uq (H, D), vq (H, d), un and vn (D).
func tok2Vectors(t *testing.T, wq, wv, wo *tensor.Dense, h int) []*tensor.Dense {
	t.Helper()
	dim := wq.Shape()[0]
	d := dim / h
	q := mat.NewDense(dim, dim, wq.Data().([]float64))
	v := mat.NewDense(dim, dim, wv.Data().([]float64))
	o := mat.NewDense(dim, dim, wo.Data().([]float64))
	var uq, vq []float64
	n := mat.NewDense(dim, dim, nil)
	for k := range h {
		qh, vh := q.Slice(0, dim, k*d, (k+1)*d), v.Slice(0, dim, k*d, (k+1)*d)
		u, w := topPair(t, mat.DenseCopyOf(qh))
		uq, vq = append(uq, u...), append(vq, w...)
		var m mat.Dense
		m.Mul(qh.T(), vh)
		m.Scale(1/math.Sqrt(float64(d)), &m)
		n.Slice(k*d, (k+1)*d, 0, dim).(*mat.Dense).Mul(&m, o.Slice(k*d, (k+1)*d, 0, dim))
	}
	un, vn := topPair(t, n)
	vec := func(x []float64, shape ...int) *tensor.Dense {
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(x))
	}
	return []*tensor.Dense{vec(uq, h, dim), vec(vq, h, d), vec(un, dim), vec(vn, dim)}
}

// At the exact singular vectors the op's bound equals the lipschitz package's, which uses
// exact spectral norms, with and without a position bias (9 entries, n = 6 read); a zero
// bias gives the unbiased bound.
func TestL2BoundTok2MatchesLipschitzPackage(t *testing.T) {
	for _, h := range []int{1, 2, 4} {
		for _, bias := range []string{"none", "random", "zero"} {
			wq, wv, wo := gradcheck.Rand(51, 1, 8, 8), gradcheck.Rand(52, 1, 8, 8), gradcheck.Rand(53, 1, 8, 8)
			vecs := tok2Vectors(t, wq, wv, wo, h)
			g := G.NewGraph()
			c := func(x *tensor.Dense, name string) *G.Node { return G.NodeFromAny(g, x, G.WithName(name)) }
			b := gradcheck.Rand(74, 2, h, 9)
			if bias == "zero" {
				clear(b.Data().([]float64))
			}
			var bn *G.Node
			var rows [][]float64
			if bias != "none" {
				bn = c(b, "bias")
				for k := range h {
					rows = append(rows, b.Data().([]float64)[k*9:(k+1)*9])
				}
			}
			ub, err := L2BoundTok2(c(wq, "wq"), c(wv, "wv"), c(wo, "wo"), c(vecs[0], "uq"), c(vecs[1], "vq"), c(vecs[2], "un"), c(vecs[3], "vn"), bn, h, 6)
			if err != nil {
				t.Fatal(err)
			}
			runGraph(t, g)
			split := func(x *tensor.Dense) []*mat.Dense {
				s, err := lipschitz.HeadSlices(mat.NewDense(8, 8, x.Data().([]float64)), h)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			want, err := lipschitz.L2MHABoundTok2Biased(6, split(wq), split(wv), mat.NewDense(8, 8, wo.Data().([]float64)), rows)
			if err != nil {
				t.Fatal(err)
			}
			if bias == "zero" {
				plain, err := lipschitz.L2MHABoundTok2(6, split(wq), split(wv), mat.NewDense(8, 8, wo.Data().([]float64)))
				if err != nil || math.Abs(plain-want) > 1e-12*want {
					t.Errorf("H=%d zero bias: %v, unbiased %v (%v)", h, want, plain, err)
				}
			}
			// The SVD's singular vectors may come with either sign: |u^T W v| is the norm.
			if got := ub.Value().Data().(float64); math.Abs(math.Abs(got)-want) > 1e-10*want {
				t.Errorf("H=%d bias %s: graph bound %.17g, lipschitz package %.17g", h, bias, got, want)
			}
		}
	}
}

func TestL2BoundTok2Gradient(t *testing.T) {
	for _, h := range []int{1, 2, 3} {
		for _, biased := range []bool{false, true} {
			vecs := []*tensor.Dense{gradcheck.Rand(uint64(60+h), 1, h, 6), gradcheck.Rand(uint64(61+h), 1, h, 6/h), gradcheck.Rand(uint64(62+h), 1, 6), gradcheck.Rand(uint64(63+h), 1, 6)}
			in := []gradcheck.Input{
				{Name: "wq", Value: gradcheck.Rand(uint64(64+h), 1, 6, 6)},
				{Name: "wv", Value: gradcheck.Rand(uint64(65+h), 1, 6, 6)},
				{Name: "wo", Value: gradcheck.Rand(uint64(66+h), 1, 6, 6)},
			}
			if biased { // T = 7 entries, of which the bound for n = 5 reads 5
				in = append(in, gradcheck.Input{Name: "bias", Value: gradcheck.Rand(uint64(67+h), 1, h, 7)})
			}
			res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				c := func(x *tensor.Dense, name string) *G.Node { return G.NodeFromAny(g, x, G.WithName(name)) }
				var bias *G.Node
				if biased {
					bias = in[3]
				}
				return L2BoundTok2(in[0], in[1], in[2], c(vecs[0], "uq"), c(vecs[1], "vq"), c(vecs[2], "un"), c(vecs[3], "vn"), bias, h, 5)
			}, in, 1, 1e-6)
			assertGrad(t, fmt.Sprintf("l2 token-norm bound H=%d bias=%t", h, biased), res, err)
		}
	}
}

// TestL2ProductFactorsMatchLoops: the product bound's factors (M_h, N's column, the column
// and the bound) equal, bit for bit, those of the defining loops, summed element by
// element in the same order, in float32 and float64, with 3 heads of width 4.
func TestL2ProductFactorsMatchLoops(t *testing.T) {
	const d, heads, hd, phiInv = 12, 3, 4, 1.7
	w := []*tensor.Dense{gradcheck.Rand(14, 1, d, d), gradcheck.Rand(15, 1, d, d), gradcheck.Rand(16, 1, d, d)}
	wq, wv, wo := w[0].Data().([]float64), w[1].Data().([]float64), w[2].Data().([]float64)
	f32 := func(x []float64) []float32 {
		out := make([]float32, len(x))
		for i, v := range x {
			out[i] = float32(v)
		}
		return out
	}
	check := func(what string, got l2ProductBound[float64], wq, wv, wo []float64) {
		t.Helper()
		m, n := make([]float64, heads*hd*hd), make([]float64, d*d)
		inv := 1 / math.Sqrt(hd)
		for h := range heads {
			for i := range d {
				for r := range hd {
					for s := range hd {
						m[h*hd*hd+r*hd+s] += wq[i*d+h*hd+r] * wv[i*d+h*hd+s]
					}
				}
			}
			for r := range hd {
				for s := range hd {
					c := m[h*hd*hd+r*hd+s] * inv
					m[h*hd*hd+r*hd+s] = c
					for e := range d {
						n[(h*hd+r)*d+e] += c * wo[(h*hd+s)*d+e]
					}
				}
			}
		}
		e, bound := 0, -1.0
		for c := range d {
			sum := 0.0
			for h := range heads {
				s := 0.0
				for r := range hd {
					s += math.Abs(n[(h*hd+r)*d+c])
				}
				sum += got.a[h] * s
			}
			if sum > bound {
				e, bound = c, sum
			}
		}
		if got.e != e || got.bound != bound*got.k {
			t.Fatalf("%s: column %d and bound %.17g, want %d and %.17g", what, got.e, got.bound, e, bound*got.k)
		}
		for i := range m {
			if got.m[i] != m[i] {
				t.Fatalf("%s: M[%d] = %.17g, want %.17g", what, i, got.m[i], m[i])
			}
		}
		for i := range d {
			if got.col[i] != n[i*d+e] {
				t.Fatalf("%s: N[%d, %d] = %.17g, want %.17g", what, i, e, got.col[i], n[i*d+e])
			}
		}
	}
	check("float64", l2ProductFactors(wq, wv, wo, d, heads, phiInv), wq, wv, wo)
	q32, v32, o32 := f32(wq), f32(wv), f32(wo)
	b32 := l2ProductFactors(q32, v32, o32, d, heads, phiInv)
	widen := func(x []float32) []float64 {
		out := make([]float64, len(x))
		for i, v := range x {
			out[i] = float64(v)
		}
		return out
	}
	got := l2ProductBound[float64]{m: b32.m, a: b32.a, col: b32.col, e: b32.e, bound: b32.bound, k: b32.k}
	check("float32", got, widen(q32), widen(v32), widen(o32))
}

// TestTok2FactorsMatchLoops: the token2 bound's factors (W^{Q,h} un_h, W^{V,h} (W^O vn)_h,
// s_h, sigma_N, the bound) in float64 equal, bit for bit, those of the defining loops, each
// sum taken element by element in the same order, and sigma_N equals un^T N vn summed
// through the heads' M_h = (W^{Q,h})^T W^{V,h} / sqrt(hd) to rounding, with 2 heads of width
// 4 and no bias. In float32, whose products take kernel.MulVec64's assembly (its own
// order of the float64 sums), sigma_N and the bound are within 1e-13 of float64's on the
// same values.
func TestTok2FactorsMatchLoops(t *testing.T) {
	const d, heads, hd = 8, 2, 4
	r := func(seed uint64, n ...int) []float64 { return gradcheck.Rand(seed, 1, n...).Data().([]float64) }
	wq, wv, wo, uq, vq, un, vn := r(81, d, d), r(82, d, d), r(83, d, d), r(84, heads, d), r(85, heads, hd), r(86, d), r(87, d)
	got := tok2Factors(wq, wv, wo, uq, vq, un, vn, nil, d, heads, 6)
	inv := 1 / math.Sqrt(hd)
	ov := make([]float64, d)
	for a := range d {
		for e := range d {
			ov[a] += wo[a*d+e] * vn[e]
		}
	}
	var sigma, viaM, q float64
	for h := range heads {
		lo := h * hd
		m := make([]float64, hd*hd)
		s, sh := 0.0, 0.0
		for i := range d {
			qv, qu, vo := 0.0, 0.0, 0.0
			for r := range hd {
				qv += wq[i*d+lo+r] * vq[h*hd+r]
				qu += wq[i*d+lo+r] * un[lo+r]
				vo += wv[i*d+lo+r] * ov[lo+r]
				for c := range hd {
					m[r*hd+c] += wq[i*d+lo+r] * wv[i*d+lo+c] * inv
				}
			}
			if got.qu[h*d+i] != qu || got.vo[h*d+i] != vo {
				t.Fatalf("head %d, row %d: W^Q un %.17g and W^V omega %.17g, want %.17g and %.17g", h, i, got.qu[h*d+i], got.vo[h*d+i], qu, vo)
			}
			s += uq[h*d+i] * qv
			sh += qu * vo
		}
		sigma += sh * inv
		for r := range hd {
			for c := range hd {
				viaM += un[lo+r] * m[r*hd+c] * ov[lo+c]
			}
		}
		if got.s[h] != s {
			t.Fatalf("s_%d = %.17g, want %.17g", h, got.s[h], s)
		}
		q += got.k[h] * got.k[h] * s * s
	}
	if q = math.Sqrt(q); got.sigma != sigma || got.bound != q*sigma {
		t.Fatalf("sigma_N %.17g and bound %.17g, want %.17g and %.17g", got.sigma, got.bound, sigma, q*sigma)
	}
	if math.Abs(sigma-viaM) > 1e-13*math.Max(1, math.Abs(viaM)) {
		t.Fatalf("sigma_N %.17g through the heads' products, %.17g through M_h", sigma, viaM)
	}
	f32 := func(x []float64) ([]float32, []float64) {
		a, b := make([]float32, len(x)), make([]float64, len(x))
		for i, v := range x {
			a[i] = float32(v)
			b[i] = float64(a[i])
		}
		return a, b
	}
	q32, q64 := f32(wq)
	v32, v64 := f32(wv)
	o32, o64 := f32(wo)
	uq32, uq64 := f32(uq)
	vq32, vq64 := f32(vq)
	un32, un64 := f32(un)
	vn32, vn64 := f32(vn)
	single := tok2Factors(q32, v32, o32, uq32, vq32, un32, vn32, nil, d, heads, 6)
	double := tok2Factors(q64, v64, o64, uq64, vq64, un64, vn64, nil, d, heads, 6)
	for _, c := range [][2]float64{{single.sigma, double.sigma}, {single.bound, double.bound}} {
		if math.Abs(c[0]-c[1]) > 1e-13*math.Abs(c[1]) {
			t.Fatalf("float32: sigma_N or bound %.17g, float64 on the same values %.17g", c[0], c[1])
		}
	}
}
