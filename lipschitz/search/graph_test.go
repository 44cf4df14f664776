package search

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"lipformer/lipschitz"
	"lipformer/ops"
)

// layerCase is one attention layer shape for the Jacobian tests.
type layerCase struct {
	kind        ops.AttentionKind
	dim, heads  int
	n           int
	causal      bool
	contractive bool
}

func (c layerCase) String() string {
	return fmt.Sprintf("%v D=%d H=%d N=%d causal=%t contractive=%t", c.kind, c.dim, c.heads, c.n, c.causal, c.contractive)
}

var layerCases = []layerCase{
	{ops.DotProduct, 1, 1, 5, false, false},
	{ops.DotProduct, 4, 2, 3, true, false},
	{ops.DotProduct, 6, 3, 4, false, false},
	{ops.L2, 1, 1, 6, true, false},
	{ops.L2, 4, 2, 4, false, false},
	{ops.L2, 6, 3, 3, true, false},
	{ops.L2, 4, 1, 5, false, true},
	{ops.L2Untied, 4, 2, 3, false, false},
}

// The exact graph Jacobian matches central differences of the plain-Go
// reference layer, for every kind, several D, H, N, causal or not.
func TestGraphJacobianMatchesReference(t *testing.T) {
	for i, c := range layerCases {
		a := newLayer(t, c.kind, c.dim, c.heads, c.causal, 0.7, uint64(i))
		x := randVec(rand.New(rand.NewPCG(uint64(i), 2)), c.n*c.dim, 1)
		want, err := lipschitz.Jacobian(refMap(t, a, c.n), x, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if c.contractive {
			// The reference has no contractive scale min(1, c / UB_inf) (Kim et al.'s bound), which
			// is constant in X: scale its Jacobian.
			ub, err := a.RawBound(ops.BoundKim, c.n)
			if err != nil {
				t.Fatal(err)
			}
			a.LipC, a.BoundLen = 0.5, c.n
			if !(ub > 0.5) {
				t.Fatalf("%v: bound %v, want above c = 0.5 so that the scale matters", c, ub)
			}
			want.Scale(0.5/ub, want)
		}
		m := newGraphMap(t, a, c.n, 0)
		if e := relErr(mustJacobian(t, m, x), want); !(e < 1e-8) {
			t.Errorf("%v: graph Jacobian differs from finite differences of the reference by %.3g", c, e)
		}
	}
}

// Building the Jacobian in chunks of any size gives the same matrix as one run.
func TestGraphJacobianChunks(t *testing.T) {
	for i, c := range layerCases {
		a := newLayer(t, c.kind, c.dim, c.heads, c.causal, 0.7, uint64(i))
		if c.contractive {
			a.LipC, a.BoundLen = 0.5, c.n
		}
		whole := newGraphMap(t, a, c.n, 0)
		if whole.Chunk() != whole.Len() {
			t.Fatalf("%v: default chunk %d, want all %d rows for a small layer", c, whole.Chunk(), whole.Len())
		}
		x := randVec(rand.New(rand.NewPCG(uint64(i), 3)), whole.Len(), 1)
		want := mustJacobian(t, whole, x)
		for _, chunk := range []int{1, 3, whole.Len() - 1} {
			if chunk < 1 {
				continue
			}
			got := mustJacobian(t, newGraphMap(t, a, c.n, chunk), x)
			if e := relErr(got, want); !(e < 1e-13) {
				t.Errorf("%v: chunks of %d rows differ from one run by %.3g", c, chunk, e)
			}
		}
	}
}

// A VJP is u^T J and a JVP is J v, with J the exact Jacobian, for every
// layer; a batch of VJPs at different inputs matches them one by one.
func TestGraphProducts(t *testing.T) {
	for i, c := range layerCases {
		a := newLayer(t, c.kind, c.dim, c.heads, c.causal, 0.7, uint64(i))
		if c.contractive {
			a.LipC, a.BoundLen = 0.5, c.n
		}
		m := newGraphMap(t, a, c.n, 0)
		checkProducts(t, c.String(), m, rand.New(rand.NewPCG(uint64(i), 4)), 1)
	}
}

// checkProducts checks Map m's VJP, JVP and Forward against its Jacobian and
// one another at random inputs of the given scale.
func checkProducts(t *testing.T, what string, m Map, rng *rand.Rand, scale float64) {
	t.Helper()
	k := m.Len()
	xs := [][]float64{randVec(rng, k, scale), randVec(rng, k, scale), randVec(rng, k, scale)}
	us := [][]float64{randVec(rng, k, 1), randVec(rng, k, 1), randVec(rng, k, 1)}
	got := [][]float64{make([]float64, k), make([]float64, k), make([]float64, k)}
	if err := m.VJP(xs, us, got); err != nil {
		t.Fatal(err)
	}
	for b := range xs {
		j := mustJacobian(t, m, xs[b])
		var want mat.VecDense
		want.MulVec(j.T(), mat.NewVecDense(k, us[b]))
		if e := vecErr(got[b], want.RawVector().Data); !(e < 1e-12) {
			t.Errorf("%s: VJP %d differs from u^T J by %.3g", what, b, e)
		}
		v := randVec(rng, k, 1)
		jv, err := JVP(m, xs[b], v, DefaultJVPStep)
		if err != nil {
			t.Fatal(err)
		}
		want.MulVec(j, mat.NewVecDense(k, v))
		if e := vecErr(jv, want.RawVector().Data); !(e < 1e-8) {
			t.Errorf("%s: JVP %d differs from J v by %.3g", what, b, e)
		}
	}
}
