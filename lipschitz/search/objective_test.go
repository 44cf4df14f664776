package search

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"lipformer/lipschitz"
	"lipformer/ops"
)

// exactNorm is ||J(x)||_p from the exact Jacobian, with package lipschitz's
// norms (an SVD for the 2-norm), independent of Objective.
func exactNorm(t *testing.T, m Map, p Norm, x []float64) float64 {
	t.Helper()
	j := mustJacobian(t, m, x)
	if p == Norm2 {
		return lipschitz.JacobianNorm2(j)
	}
	return lipschitz.JacobianNormInf(j)
}

// objectiveCases are maps on which the objective's gradient is checked.
func objectiveCases(t *testing.T) map[string]Map {
	t.Helper()
	cases := map[string]Map{}
	for _, kind := range []ops.AttentionKind{ops.DotProduct, ops.L2} {
		for _, causal := range []bool{false, true} {
			s, err := NewScalar(kind, 6, causal, 1.2, -0.8, 0.9, 1.1)
			if err != nil {
				t.Fatal(err)
			}
			cases[fmt.Sprintf("scalar %v causal=%t", kind, causal)] = s
		}
	}
	for i, c := range []layerCase{
		{kind: ops.L2, dim: 4, heads: 2, n: 3},
		{kind: ops.L2, dim: 2, heads: 1, n: 4, causal: true},
		{kind: ops.DotProduct, dim: 4, heads: 2, n: 3},
		{kind: ops.DotProduct, dim: 2, heads: 1, n: 4, causal: true},
	} {
		cases["graph "+c.String()] = newGraphMap(t, newLayer(t, c.kind, c.dim, c.heads, c.causal, 0.8, uint64(10+i)), c.n, 0)
	}
	return cases
}

// The gradient of ||J(X)||_p from Objective (Hessian-vector products by
// differences of exact VJPs) matches central differences of the exact norm,
// for both norms, on scalar and graph maps of both kinds; its value is the
// exact norm.
func TestObjectiveGradientMatchesFiniteDifferences(t *testing.T) {
	const h = 1e-5
	for name, m := range objectiveCases(t) {
		for _, p := range []Norm{NormInf, Norm2} {
			rng := rand.New(rand.NewPCG(21, uint64(p)))
			for trial := range 3 {
				x := randVec(rng, m.Len(), 1)
				obj, err := NewObjective(m, p, 0)
				if err != nil {
					t.Fatal(err)
				}
				grad := make([]float64, len(x))
				value, err := obj.ValueGrad(x, grad)
				if err != nil {
					t.Fatal(err)
				}
				if want := exactNorm(t, m, p, x); !(relDiff(value, want) < 1e-12) {
					t.Errorf("%s ||J||_%v trial %d: value %.15g, exact %.15g", name, p, trial, value, want)
				}
				fd := make([]float64, len(x))
				probe := append([]float64(nil), x...)
				for k := range x {
					probe[k] = x[k] + h
					up := exactNorm(t, m, p, probe)
					probe[k] = x[k] - h
					down := exactNorm(t, m, p, probe)
					probe[k] = x[k]
					fd[k] = (up - down) / (2 * h)
				}
				if e := vecErr(grad, fd); !(e < 1e-6) {
					t.Errorf("%s ||J||_%v trial %d: gradient differs from finite differences by %.3g\ngot  %v\nwant %v", name, p, trial, e, grad, fd)
				}
			}
		}
	}
}

// relDiff is |a - b| / |b|.
func relDiff(a, b float64) float64 {
	d := (a - b) / b
	if d < 0 {
		return -d
	}
	return d
}

// On a map too large for the full check (and, for the 2-norm, large enough
// for power iteration), the gradient's directional derivatives match central
// differences of the exact norm along random directions.
func TestObjectiveDirectionalDerivatives(t *testing.T) {
	const n, h = svdMax + 40, 1e-5
	for _, kind := range []ops.AttentionKind{ops.DotProduct, ops.L2} {
		m, err := NewScalar(kind, n, false, 1, 1, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []Norm{NormInf, Norm2} {
			rng := rand.New(rand.NewPCG(22, uint64(p)))
			x := randVec(rng, n, 1.5)
			obj, err := NewObjective(m, p, 0)
			if err != nil {
				t.Fatal(err)
			}
			grad := make([]float64, n)
			if _, err := obj.ValueGrad(x, grad); err != nil {
				t.Fatal(err)
			}
			for trial := range 3 {
				d := randVec(rng, n, 1)
				up, down := make([]float64, n), make([]float64, n)
				want := 0.0
				for k := range x {
					up[k], down[k] = x[k]+h*d[k], x[k]-h*d[k]
					want += grad[k] * d[k]
				}
				got := (exactNorm(t, m, p, up) - exactNorm(t, m, p, down)) / (2 * h)
				if !(relDiff(got, want) < 1e-6) {
					t.Errorf("%v N=%d ||J||_%v direction %d: finite difference %.12g, gradient . d = %.12g", kind, n, p, trial, got, want)
				}
			}
		}
	}
}

// Partial keeps the weight vector chosen by ValueGrad at another input: its
// value is ||J(x)^T w||_q, at most ||J(x)||_p, and its gradient matches
// central differences of that value.
func TestObjectivePartialGradient(t *testing.T) {
	const h = 1e-5
	for name, m := range objectiveCases(t) {
		for _, p := range []Norm{NormInf, Norm2} {
			rng := rand.New(rand.NewPCG(23, uint64(p)))
			obj, err := NewObjective(m, p, 0)
			if err != nil {
				t.Fatal(err)
			}
			grad := make([]float64, m.Len())
			if _, err := obj.Partial(randVec(rng, m.Len(), 1), grad); err == nil {
				t.Fatalf("%s: Partial before ValueGrad: want error", name)
			}
			x0 := randVec(rng, m.Len(), 1)
			if _, err := obj.ValueGrad(x0, grad); err != nil {
				t.Fatal(err)
			}
			x := append([]float64(nil), x0...)
			for k := range x {
				x[k] += 0.1 * rng.NormFloat64()
			}
			value, err := obj.Partial(x, grad)
			if err != nil {
				t.Fatal(err)
			}
			if full := exactNorm(t, m, p, x); value > full*(1+1e-12) {
				t.Errorf("%s ||J||_%v: partial value %.15g above the norm %.15g", name, p, value, full)
			}
			partial := func(y []float64) float64 {
				v, err := obj.Partial(y, make([]float64, len(y)))
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			fd := make([]float64, len(x))
			probe := append([]float64(nil), x...)
			for k := range x {
				probe[k] = x[k] + h
				up := partial(probe)
				probe[k] = x[k] - h
				fd[k] = (up - partial(probe)) / (2 * h)
				probe[k] = x[k]
			}
			if e := vecErr(grad, fd); !(e < 1e-6) {
				t.Errorf("%s ||J||_%v: partial gradient differs from finite differences by %.3g", name, p, e)
			}
		}
	}
}
