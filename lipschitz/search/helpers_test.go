package search

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"

	"lipformer/internal/ref"
	"lipformer/layers"
	"lipformer/lipschitz"
	"lipformer/ops"
)

// newLayer returns a float64 attention layer of width dim with N(0, std^2)
// weights drawn from seed.
func newLayer(t *testing.T, kind ops.AttentionKind, dim, heads int, causal bool, std float64, seed uint64) *layers.Attention {
	t.Helper()
	a, err := layers.NewAttention("attn", kind, dim, heads, causal, std, std, tensor.Float64, rand.New(rand.NewPCG(seed, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// setScalars sets the weights of a D = H = 1 layer (WK only if present).
func setScalars(a *layers.Attention, wq, wk, wv, wo float64) {
	for p, v := range map[*layers.Param]float64{a.WQ: wq, a.WK: wk, a.WV: wv, a.WO: wo} {
		if p != nil {
			p.Value.Data().([]float64)[0] = v
		}
	}
}

// matOf copies a (D, D) parameter into a gonum matrix.
func matOf(p *layers.Param) *mat.Dense {
	s := p.Value.Shape()
	return mat.NewDense(s[0], s[1], append([]float64(nil), p.Value.Data().([]float64)...))
}

// heads splits a parameter into its per-head (D, d) blocks (nil for a nil p).
func heads(t *testing.T, p *layers.Param, h int) []*mat.Dense {
	t.Helper()
	if p == nil {
		return nil
	}
	hs, err := lipschitz.HeadSlices(matOf(p), h)
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

// refMap is the plain-Go reference of layer a on vec(X) for (n, D) sequences.
func refMap(t *testing.T, a *layers.Attention, n int) func([]float64) []float64 {
	t.Helper()
	dim := a.WQ.Value.Shape()[0]
	wq, wk, wv, wo := heads(t, a.WQ, a.Heads), heads(t, a.WK, a.Heads), heads(t, a.WV, a.Heads), matOf(a.WO)
	return func(v []float64) []float64 {
		x, err := ref.Unflatten(v, n, dim)
		if err != nil {
			t.Fatal(err)
		}
		var y [][]float64
		switch a.Kind {
		case ops.DotProduct:
			y, err = ref.DPMHA(x, wq, wk, wv, wo, a.Causal)
		case ops.L2:
			y, err = ref.L2MHA(x, wq, wv, wo, a.Causal)
		case ops.L2Untied:
			y, err = ref.L2MHAUntied(x, wq, wk, wv, wo, a.Causal)
		}
		if err != nil {
			t.Fatal(err)
		}
		out, err := ref.Flatten(y)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
}

// newGraphMap is NewGraphMap that fails t on error and closes the map at the
// end of the test.
func newGraphMap(t *testing.T, a *layers.Attention, n, chunk int) *GraphMap {
	t.Helper()
	m, err := NewGraphMap(a, n, chunk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// mustJacobian is JacobianOf that fails t on error.
func mustJacobian(t *testing.T, m Map, x []float64) *mat.Dense {
	t.Helper()
	j, err := JacobianOf(m, x)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// randVec returns k N(0, scale^2) values drawn from rng.
func randVec(rng *rand.Rand, k int, scale float64) []float64 {
	v := make([]float64, k)
	for i := range v {
		v[i] = scale * rng.NormFloat64()
	}
	return v
}

// relErr is ||got - want||_F / ||want||_F (or the absolute error for a zero
// want).
func relErr(got, want mat.Matrix) float64 {
	var d mat.Dense
	d.Sub(got, want)
	return mat.Norm(&d, 2) / math.Max(mat.Norm(want, 2), 1e-300)
}

// vecErr is relErr for vectors.
func vecErr(got, want []float64) float64 {
	return relErr(mat.NewVecDense(len(got), got), mat.NewVecDense(len(want), want))
}
