package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/layers"
	"lipformer/lipschitz"
	"lipformer/spec"
)

// networkJacobian returns a function computing the exact (T*V, T*D) Jacobian of the map
// from an embedded sequence (T, D) to the logits, through the blocks, the final LayerNorm
// and the head: the batch holds T*V copies of the sequence, copy k weighted by the k-th
// unit vector of the logits.
func networkJacobian(t *testing.T, m *Model) func(x []float64) *mat.Dense {
	t.Helper()
	T, D, V := m.Cfg.Context, m.Cfg.Width, m.Cfg.Vocab
	rows := T * V
	g, err := layers.NewGraph(tensor.Float64, rows, T, false)
	if err != nil {
		t.Fatal(err)
	}
	xt := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(rows*T, D))
	xn := G.NodeFromAny(g.G, xt, G.WithName("x"))
	y := xn
	for _, b := range m.Blocks {
		if y, err = b.Forward(g, y); err != nil {
			t.Fatal(err)
		}
	}
	if y, err = m.Final.Forward(g, y); err != nil {
		t.Fatal(err)
	}
	if y, err = m.head(g, y); err != nil { // (rows*T, V)
		t.Fatal(err)
	}
	sel := make([]float64, rows*T*V)
	for k := 0; k < rows; k++ {
		sel[k*T*V+k] = 1
	}
	r := G.NodeFromAny(g.G, tensor.New(tensor.WithShape(rows*T, V), tensor.WithBacking(sel)), G.WithName("sel"))
	loss := G.Must(G.Sum(G.Must(G.HadamardProd(y, r))))
	grads, err := G.Grad(loss, xn)
	if err != nil {
		t.Fatal(err)
	}
	var grad G.Value
	G.Read(grads[0], &grad)
	vm := G.NewTapeMachine(g.G)
	t.Cleanup(func() { vm.Close() })
	return func(x []float64) *mat.Dense {
		xs := xt.Data().([]float64)
		for k := 0; k < rows; k++ {
			copy(xs[k*T*D:(k+1)*T*D], x)
		}
		vm.Reset()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		return mat.NewDense(rows, T*D, append([]float64(nil), grad.Data().([]float64)...))
	}
}

// TestCertificateBoundsTheNetwork: for Lipschitz architectures, norm placements and
// invertible blocks of several MLP sub-blocks (a factor each), the exact Jacobian of the
// network at random embedded inputs never exceeds the certificate's products, in either
// norm; dot-product attention gets no finite bound.
func TestCertificateBoundsTheNetwork(t *testing.T) {
	for _, c := range []struct {
		arch, norm string
		tie        bool
		bound      string
		temp       bool
		mlps, mix  int
	}{
		{"l2", "none", false, "", false, 0, 0}, {"l2", "pre", false, "", false, 0, 0}, {"l2", "post", false, "", false, 0, 0}, {"l2", "pre", true, "", false, 0, 0},
		{"contractive-l2", "none", false, "", false, 0, 0}, {"invertible-l2", "none", false, "", false, 0, 0},
		{"contractive-l2", "pre", false, "product", true, 0, 0}, {"invertible-l2", "none", false, "token2", true, 0, 0}, {"l2", "none", false, "", true, 0, 0},
		{"l2", "ball", false, "", false, 0, 0}, {"contractive-l2", "ball", false, "token2", true, 0, 0}, {"invertible-l2", "ball", false, "token2", true, 0, 0},
		{"invertible-l2", "none", false, "token2", true, 3, 0}, {"invertible-l2", "ball", false, "token2", true, 2, 0},
		{"l2", "pre", false, "", false, 0, 3}, {"invertible-l2", "none", false, "token2", true, 2, 4}, {"invertible-l2", "ball", false, "token2", true, 0, 2},
	} {
		cfg := Config{Arch: mustArch(c.arch), Layers: 2, Heads: 2, Width: 4, Context: 4, Vocab: 5, Norm: mustNorm(c.norm), LipC: 0.9, Dtype: spec.Float64, Std: 0.5, Tie: c.tie, L2Bound: mustBound(c.bound), L2Temp: c.temp, MLPBlocks: c.mlps, Mix: c.mix}
		if c.norm == "ball" {
			cfg.BallRadius = 0.3 // below the inputs' scales: the projection is active
		}
		m, err := New(cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		spreadTaps(m, 4)
		cert, err := m.Certificate()
		if err != nil {
			t.Fatal(err)
		}
		if math.IsInf(float64(cert.Inf), 1) || math.IsInf(float64(cert.Two), 1) || math.IsInf(float64(cert.Tok2), 1) || len(cert.Factors) != cfg.SubBlocks()+2 {
			t.Fatalf("%s %s: certificate %+v", c.arch, c.norm, cert)
		}
		jac := networkJacobian(t, m)
		rng := rand.New(rand.NewPCG(1, 2))
		var worst float64
		for i := 0; i < 10; i++ {
			x := make([]float64, cfg.Context*cfg.Width)
			for j := range x {
				x[j] = []float64{0.1, 1, 10}[i%3] * rng.NormFloat64()
			}
			j := jac(x)
			inf, two := lipschitz.JacobianNormInf(j), lipschitz.JacobianNorm2(j)
			tok2, err := lipschitz.JacobianNormTok2(j, cfg.Context, 20)
			if err != nil {
				t.Fatal(err)
			}
			if inf > float64(cert.Inf) || two > float64(cert.Two) || tok2 > float64(cert.Tok2) {
				t.Fatalf("%s %s: ||J||_inf %v (certified %v), ||J||_2 %v (certified %v), token norm %v (certified %v)", c.arch, c.norm, inf, cert.Inf, two, cert.Two, tok2, cert.Tok2)
			}
			worst = math.Max(worst, inf/float64(cert.Inf))
		}
		t.Logf("%s %s: certified inf %.3g, 2 %.3g; largest measured/certified (inf) %.2g", c.arch, c.norm, cert.Inf, cert.Two, worst)
	}
}

func TestCertificateOfDotProductIsUnbounded(t *testing.T) {
	m, err := New(tiny("dp"), 1)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := m.Certificate()
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(float64(cert.Inf), 1) || cert.Factors[0].Note == "" {
		t.Fatalf("dp certificate %+v, want an infinite product and a note", cert)
	}
	if b, err := Bound(math.Inf(1)).MarshalJSON(); err != nil || string(b) != "null" {
		t.Fatalf("infinite bound marshals to %s, %v", b, err)
	}
}

// TestLipKBoundsTheWholeModel: a model bounded by K lists a factor for every part (each
// sub-block, the final ball norm, the head), its certified product is their product and at
// most K once the power iterations have converged (K itself in the token norm), and the
// exact Jacobian of the whole map from embeddings to logits stays below it at random inputs
// of every scale, with and without mixing sub-blocks (unequal taps), with ELU and MaxMin. At K = 1000 the head alone (gain K / 1.9^4 = 77) pulls inputs further
// apart than all the other factors allow (1.9^4 = 13), so a certificate that left the head
// out would be exceeded by a measured Jacobian.
func TestLipKBoundsTheWholeModel(t *testing.T) {
	for _, c := range []struct {
		k    float64
		norm spec.Norm
		mlps int // 0: the recipe's
		mix  int
		act  string
	}{{1, spec.NoLN, 0, 0, ""}, {10, spec.BallPre, 2, 0, ""}, {1000, spec.NoLN, 1, 0, ""}, {10, spec.NoLN, 1, 3, ""}, {1000, spec.NoLN, 1, 0, "maxmin"}} {
		cfg := Config{Arch: spec.InvertibleL2, Layers: 2, Heads: 2, Width: 4, Context: 4, Vocab: 5, Norm: c.norm, LipC: 0.9,
			Dtype: spec.Float64, Std: 0.5, LipK: c.k, MLPBlocks: c.mlps, Mix: c.mix, Activation: c.act}.WithCertifiedRecipe()
		m, err := New(cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		spreadTaps(m, 4)
		m.PowerIterate(500)
		cert, err := m.Certificate()
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for i := range cfg.Layers {
			if c.mix > 0 {
				want = append(want, fmt.Sprintf("h%d.mix", i))
			}
			want = append(want, fmt.Sprintf("h%d.attn", i))
			for k := range cfg.MLPSubBlocks() {
				want = append(want, fmt.Sprintf("h%d.%s", i, layers.MLPName(k)))
			}
		}
		want = append(want, "lnf", "head")
		prod := 1.0
		var names []string
		for _, f := range cert.Factors {
			names = append(names, f.Name)
			prod *= float64(f.Tok2)
		}
		if !slices.Equal(names, want) {
			t.Fatalf("K = %g: factors %v, want %v", c.k, names, want)
		}
		if got := float64(cert.Tok2); math.Abs(got-prod) > 1e-12*prod || !(got <= c.k*(1+1e-9)) || !(got >= 0.5*c.k) {
			t.Errorf("K = %g: certified %v, product of the factors %v, want at most K", c.k, got, prod)
		}
		head := float64(cert.Factors[len(cert.Factors)-1].Tok2)
		if math.Abs(head-cfg.HeadGain()) > 1e-9*head {
			t.Errorf("K = %g: head factor %v, want the gain %v", c.k, head, cfg.HeadGain())
		}
		jac := networkJacobian(t, m)
		rng := rand.New(rand.NewPCG(1, 2))
		var worst float64
		for i := 0; i < 12; i++ {
			x := make([]float64, cfg.Context*cfg.Width)
			for j := range x {
				x[j] = []float64{0.01, 0.1, 1, 10}[i%4] * rng.NormFloat64()
			}
			tok2, err := lipschitz.JacobianNormTok2(jac(x), cfg.Context, 20)
			if err != nil {
				t.Fatal(err)
			}
			if tok2 > float64(cert.Tok2) {
				t.Fatalf("K = %g: token-norm Jacobian %v above the certified %v", c.k, tok2, cert.Tok2)
			}
			worst = math.Max(worst, tok2)
		}
		if c.k == 1000 && !(worst > float64(cert.Tok2)/head) {
			t.Errorf("K = %g: largest Jacobian %v is within the certificate without its head factor (%v): the test cannot see a dropped head", c.k, worst, float64(cert.Tok2)/head)
		}
		t.Logf("K = %g %s: certified %.4g, largest measured %.4g", c.k, cfg.MLPActivation(), cert.Tok2, worst)
	}
}

// spreadTaps draws every mixing sub-block's tap logits from N(0, 1), so that the taps are
// unequal (they start equal).
func spreadTaps(m *Model, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 5))
	for _, p := range m.Params() {
		if strings.HasSuffix(p.Name, ".taps") {
			v := p.Value.Data().([]float64)
			for i := range v {
				v[i] = r.NormFloat64()
			}
		}
	}
}
