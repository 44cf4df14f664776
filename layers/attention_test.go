package layers

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/internal/ref"
	"lipformer/lipschitz"
	"lipformer/ops"
)

var kinds = []ops.AttentionKind{ops.DotProduct, ops.L2, ops.L2Untied}

// refAttention runs the plain-Go layer of docs/math.md, "Attention" on every sequence of x.
func refAttention(t *testing.T, a *Attention, x [][]float64, seqLen int) [][]float64 {
	t.Helper()
	split := func(p *Param) []*mat.Dense {
		if p == nil {
			return nil
		}
		h, err := lipschitz.HeadSlices(matOf(p), a.Heads)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	wq, wk, wv, wo := split(a.WQ), split(a.WK), split(a.WV), matOf(a.WO)
	var out [][]float64
	for s := 0; s < len(x); s += seqLen {
		var y [][]float64
		var err error
		switch a.Kind {
		case ops.DotProduct:
			y, err = ref.DPMHA(x[s:s+seqLen], wq, wk, wv, wo, a.Causal)
		case ops.L2:
			if rows := a.biasRows(); rows != nil {
				y, err = ref.L2MHABiased(x[s:s+seqLen], wq, wv, wo, rows)
			} else {
				y, err = ref.L2MHA(x[s:s+seqLen], wq, wv, wo, a.Causal)
			}
		case ops.L2Untied:
			y, err = ref.L2MHAUntied(x[s:s+seqLen], wq, wk, wv, wo, a.Causal)
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, y...)
	}
	return out
}

func TestAttentionForwardMatchesReference(t *testing.T) {
	for _, kind := range kinds {
		for _, causal := range []bool{false, true} {
			for _, h := range []int{1, 2, 4} {
				a, err := NewAttention("attn", kind, 8, h, causal, 0.5, 0.5, tensor.Float64, rng(uint64(h)))
				if err != nil {
					t.Fatal(err)
				}
				x := gradcheck.Rand(2, 1, 3*5, 8) // B = 3 sequences of T = 5
				got := forward(t, x, 3, 5, a.Forward)
				assertRows(t, fmt.Sprintf("%v causal=%t H=%d", kind, causal, h), got, refAttention(t, a, rowsOf(x), 5), 1e-12)
			}
		}
	}
}

func TestAttentionGradient(t *testing.T) {
	for _, kind := range kinds {
		for _, causal := range []bool{false, true} {
			a, err := NewAttention("attn", kind, 6, 2, causal, 0.5, 0.5, tensor.Float64, rng(3))
			if err != nil {
				t.Fatal(err)
			}
			checkGrad(t, fmt.Sprintf("%v causal=%t", kind, causal), a.Params(), gradcheck.Rand(4, 1, 2*4, 6), 2, 4, a.Forward)
		}
	}
}

func TestDPAttentionHasNoBound(t *testing.T) {
	for _, kind := range []ops.AttentionKind{ops.DotProduct, ops.L2Untied} {
		a, _ := NewAttention("attn", kind, 4, 1, false, 1, 1, tensor.Float64, rng(1))
		if _, err := a.LipschitzInf(8); !errors.Is(err, lipschitz.ErrNotLipschitz) {
			t.Errorf("%v: inf bound error %v, want ErrNotLipschitz", kind, err)
		}
		if _, err := a.Lipschitz2(8); !errors.Is(err, lipschitz.ErrNotLipschitz) {
			t.Errorf("%v: 2 bound error %v, want ErrNotLipschitz", kind, err)
		}
	}
}

// TestL2AttentionBoundHolds: for random L2-MHA weights (D = 8, H = 2, N = 16, full and
// causal, query weights of two scales: [K]'s literal 2-norm formula fails for large
// ones), the exact Jacobian of the layer's graph at 100 random inputs (of scales 0.1 to
// 10) has inf-norm and 2-norm below the layer's bounds.
func TestL2AttentionBoundHolds(t *testing.T) {
	const n, d, inputs = 16, 8, 100
	for _, c := range []struct {
		causal bool
		qScale float64
	}{{false, 1}, {true, 1}, {false, 6}} {
		causal := c.causal
		a, err := NewAttention("attn", ops.L2, d, 2, causal, 0.5, 0.5, tensor.Float64, rng(7))
		if err != nil {
			t.Fatal(err)
		}
		wq := a.WQ.Value.Data().([]float64)
		for i := range wq {
			wq[i] *= c.qScale
		}
		ubInf, err := a.LipschitzInf(n)
		if err != nil {
			t.Fatal(err)
		}
		ub2, err := a.Lipschitz2(n)
		if err != nil {
			t.Fatal(err)
		}
		jac := newJacobian(t, a, n, d)
		checkJacobian(t, a, jac, n, d)
		var worstInf, worst2 float64
		for i := 0; i < inputs; i++ {
			scale := []float64{0.1, 1, 3, 10}[i%4]
			j := jac.at(t, gradcheck.Rand(uint64(100+i), scale, n, d).Data().([]float64))
			inf, two := lipschitz.JacobianNormInf(j), lipschitz.JacobianNorm2(j)
			if inf > ubInf || two > ub2 {
				t.Fatalf("causal=%t input %d (scale %g): ||J||_inf %.6g (bound %.6g), ||J||_2 %.6g (bound %.6g)", causal, i, scale, inf, ubInf, two, ub2)
			}
			worstInf, worst2 = math.Max(worstInf, inf/ubInf), math.Max(worst2, two/ub2)
		}
		t.Logf("causal=%t, W^Q x%g: largest measured/bound ratio: inf %.3g, 2 %.3g", causal, c.qScale, worstInf, worst2)
	}
}

// checkJacobian fails unless the graph's Jacobian at one input matches central
// differences of the plain-Go reference layer.
func checkJacobian(t *testing.T, a *Attention, jac *jacobian, n, d int) {
	t.Helper()
	x := gradcheck.Rand(99, 1, n, d).Data().([]float64)
	f := func(v []float64) []float64 {
		rows := make([][]float64, n)
		for i := range rows {
			rows[i] = v[i*d : (i+1)*d]
		}
		var out []float64
		for _, r := range refAttention(t, a, rows, n) {
			out = append(out, r...)
		}
		return out
	}
	want, err := lipschitz.Jacobian(f, x, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	got := jac.at(t, x)
	var diff mat.Dense
	diff.Sub(got, want)
	if e := mat.Norm(&diff, 2) / mat.Norm(want, 2); e > 1e-7 {
		t.Fatalf("graph Jacobian differs from finite differences of the reference: relative error %.3g", e)
	}
}

// jacobian computes the exact (N*D, N*D) Jacobian of a layer on one sequence in one run:
// the batch holds N*D copies of the sequence and copy k's output is weighted by the k-th
// unit vector, so the gradient of copy k of the input is row k of the Jacobian.
type jacobian struct {
	n, d int
	m    G.VM
	x    *tensor.Dense // (N*D*N, D): the stacked copies
	grad G.Value
}

func newJacobian(t *testing.T, a *Attention, n, d int) *jacobian {
	t.Helper()
	return newMapJacobian(t, a.Forward, n, d)
}

// newMapJacobian is newJacobian of any layer map fwd on sequences of n tokens of width d.
func newMapJacobian(t *testing.T, fwd func(*Graph, *G.Node) (*G.Node, error), n, d int) *jacobian {
	t.Helper()
	nd := n * d
	g, err := NewGraph(tensor.Float64, nd, n, false)
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(nd*n, d))
	xn := G.NodeFromAny(g.G, x, G.WithName("x"))
	y, err := fwd(g, xn)
	if err != nil {
		t.Fatal(err)
	}
	sel := make([]float64, nd*nd) // copy k selects output element k
	for k := 0; k < nd; k++ {
		sel[k*nd+k] = 1
	}
	r := G.NodeFromAny(g.G, tensor.New(tensor.WithShape(nd*n, d), tensor.WithBacking(sel)), G.WithName("sel"))
	loss := G.Must(G.Sum(G.Must(G.HadamardProd(y, r))))
	grads, err := G.Grad(loss, xn)
	if err != nil {
		t.Fatal(err)
	}
	j := &jacobian{n: n, d: d, x: x}
	G.Read(grads[0], &j.grad)
	j.m = G.NewTapeMachine(g.G)
	t.Cleanup(func() { j.m.Close() })
	return j
}

// at returns the Jacobian at the sequence x (N*D values, row-major).
func (j *jacobian) at(t *testing.T, x []float64) *mat.Dense {
	t.Helper()
	nd := j.n * j.d
	xs := j.x.Data().([]float64)
	for k := 0; k < nd; k++ {
		copy(xs[k*nd:(k+1)*nd], x)
	}
	j.m.Reset()
	if err := j.m.RunAll(); err != nil {
		t.Fatal(err)
	}
	return mat.NewDense(nd, nd, append([]float64(nil), j.grad.Data().([]float64)...))
}

func TestContractiveAttentionGradient(t *testing.T) {
	a, err := NewAttention("attn", ops.L2, 6, 2, true, 0.5, 0.5, tensor.Float64, rng(3))
	if err != nil {
		t.Fatal(err)
	}
	a.LipC, a.BoundLen = 0.9, 4
	if s, err := a.LipschitzInf(4); err != nil || s > 0.9+1e-12 {
		t.Fatalf("contractive bound %v, %v; want <= 0.9", s, err)
	}
	checkGrad(t, "contractive l2", a.Params(), gradcheck.Rand(4, 1, 2*4, 6), 2, 4, a.Forward)
}

// TestContractiveAttentionIsContractive: the exact Jacobian of contractive L2 attention
// (c = 0.9) has inf-norm at most c at random inputs of every scale, for weights whose
// plain bound is far above c.
func TestContractiveAttentionIsContractive(t *testing.T) {
	const n, d, c = 8, 4, 0.9
	a, err := NewAttention("attn", ops.L2, d, 2, true, 1, 1, tensor.Float64, rng(11))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := a.LipschitzInf(n)
	if err != nil || plain < 10*c {
		t.Fatalf("plain bound %v (%v): want weights with a bound far above c", plain, err)
	}
	a.LipC, a.BoundLen = c, n
	jac := newJacobian(t, a, n, d)
	for i := 0; i < 40; i++ {
		j := jac.at(t, gradcheck.Rand(uint64(500+i), []float64{0.1, 1, 10, 100}[i%4], n, d).Data().([]float64))
		if inf := lipschitz.JacobianNormInf(j); inf > c {
			t.Fatalf("input %d: ||J||_inf = %v > c = %v", i, inf, c)
		}
	}
}

// TestL2BoundHoldsAtTheCounterexample: D = H = 1, N = 2, W^Q = 4, W^V = W^O = 1 at X = 0
// has ||J||_2 = 16 exactly, above [K]'s formula as stated (11.96); the layer's 2-norm bound
// must hold there.
func TestL2BoundHoldsAtTheCounterexample(t *testing.T) {
	a, err := NewAttention("attn", ops.L2, 1, 1, false, 1, 1, tensor.Float64, rng(1))
	if err != nil {
		t.Fatal(err)
	}
	a.WQ.fill(4)
	a.WV.fill(1)
	a.WO.fill(1)
	j := newJacobian(t, a, 2, 1).at(t, []float64{0, 0})
	got := lipschitz.JacobianNorm2(j)
	if math.Abs(got-16) > 1e-9 {
		t.Fatalf("||J||_2 = %v at the counterexample, want 16", got)
	}
	ub, err := a.Lipschitz2(2)
	if err != nil {
		t.Fatal(err)
	}
	if got > ub {
		t.Fatalf("||J||_2 = %v above the layer's bound %v", got, ub)
	}
}
