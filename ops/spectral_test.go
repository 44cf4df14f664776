package ops

import (
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
)

// spectralInputs are a (5, 3) weight and vectors u (5), v (3) with u^T W v > 0.
func spectralInputs() (w, u, v *tensor.Dense) {
	w, u, v = gradcheck.Rand(1, 1, 5, 3), gradcheck.Rand(2, 1, 5), gradcheck.Rand(3, 1, 3)
	if sigmaOf(w, u, v) < 0 {
		ud := u.Data().([]float64)
		for i := range ud {
			ud[i] = -ud[i]
		}
	}
	return w, u, v
}

// sigmaOf is u^T W v in plain Go.
func sigmaOf(w, u, v *tensor.Dense) float64 {
	wr, ud, vd := rows(w), u.Data().([]float64), v.Data().([]float64)
	var s float64
	for i := range wr {
		for j := range wr[i] {
			s += ud[i] * wr[i][j] * vd[j]
		}
	}
	return s
}

func TestSpectralNormalizeMatchesReference(t *testing.T) {
	w, u, v := spectralInputs()
	const c = 0.7
	got := run1(t, w, func(wn *G.Node) (*G.Node, error) {
		return SpectralNormalize(wn, G.NodeFromAny(wn.Graph(), u, G.WithName("u")), G.NodeFromAny(wn.Graph(), v, G.WithName("v")), c)
	})
	sigma := sigmaOf(w, u, v)
	want := rows(w)
	for _, r := range want {
		for j := range r {
			r[j] *= c / sigma
		}
	}
	assertClose(t, "spectral normalize", got, want, 1e-14)
}

func TestSpectralNormalizeGradient(t *testing.T) {
	w, u, v := spectralInputs()
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return SpectralNormalize(in[0], in[1], in[2], 0.9)
	}, []gradcheck.Input{{Name: "w", Value: w}, {Name: "u", Value: u, NoGrad: true}, {Name: "v", Value: v, NoGrad: true}}, 5, 1e-5)
	assertGrad(t, "spectral normalize", res, err)
}

func TestSpectralNormalizeRejectsANonPositiveEstimate(t *testing.T) {
	w, u, v := spectralInputs()
	ud := u.Data().([]float64)
	for i := range ud {
		ud[i] = -ud[i]
	}
	g := G.NewGraph()
	if _, err := SpectralNormalize(G.NodeFromAny(g, w, G.WithName("w")), G.NodeFromAny(g, u, G.WithName("u")), G.NodeFromAny(g, v, G.WithName("v")), 1); err != nil {
		t.Fatal(err)
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err == nil || !strings.Contains(err.Error(), "power iteration") {
		t.Fatalf("negative estimate: error %v, want one asking for power iteration", err)
	}
	if _, err := SpectralNormalize(G.NodeFromAny(g, w, G.WithName("w2")), G.NodeFromAny(g, v, G.WithName("v2")), G.NodeFromAny(g, u, G.WithName("u2")), 1); err == nil {
		t.Fatal("swapped u and v were accepted")
	}
}

// TestSpectralGradMatchesItsFormula: the float32 gradient of c W / sigma equals, bit for
// bit, (c/sigma) (dy - T(((<dy, W>/sigma) u_i) v_j)) taken element by element in float64,
// on a (7, 5) weight.
func TestSpectralGradMatchesItsFormula(t *testing.T) {
	const rows, cols, c, sigma = 7, 5, 0.9, 1.3
	f32 := func(seed uint64, n int) []float32 {
		out := make([]float32, n)
		for i, x := range gradcheck.Rand(seed, 1, n).Data().([]float64) {
			out[i] = float32(x)
		}
		return out
	}
	w, u, v, dy := f32(4, rows*cols), f32(5, rows), f32(6, cols), f32(7, rows*cols)
	got := make([]float32, rows*cols)
	spectralGrad(got, w, u, v, dy, cols, sigma, c)
	var inner float64
	for i := range dy {
		inner += float64(dy[i]) * float64(w[i])
	}
	k, s := inner/sigma, float32(c/sigma)
	for i := range rows {
		for j := range cols {
			want := s * (dy[i*cols+j] - float32(k*float64(u[i])*float64(v[j])))
			if got[i*cols+j] != want {
				t.Fatalf("[%d, %d]: got %.9g, want %.9g", i, j, got[i*cols+j], want)
			}
		}
	}
}
