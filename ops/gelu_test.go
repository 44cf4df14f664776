package ops

import (
	"math"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/internal/ref"
	"lipformer/kernel"
)

func TestGELUMatchesReference(t *testing.T) {
	x := gradcheck.Rand(1, 3, 4, 5)
	got := run1(t, x, GELU)
	xs := x.Data().([]float64)
	for i, v := range xs {
		if w := ref.GELU(v); got[i]-w > 1e-15 || w-got[i] > 1e-15 {
			t.Fatalf("gelu(%v): got %v want %v", v, got[i], w)
		}
	}
}

func TestGELUGradient(t *testing.T) {
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return GELU(in[0])
	}, []gradcheck.Input{{Name: "x", Value: gradcheck.Rand(2, 3, 4, 5)}}, 3, 1e-5)
	assertGrad(t, "gelu", res, err)
}

// TestFloat32ActivationsRunKernels: the float32 GELU and ELU ops and their gradients give
// exactly kernel's values (whose accuracy package kernel tests), on inputs across the fast
// kernels' range and beyond, NaN and the infinities among them.
func TestFloat32ActivationsRunKernels(t *testing.T) {
	xs := make([]float32, 0, 4003)
	for i := -2000; i <= 2000; i++ {
		xs = append(xs, float32(i)*0.006)
	}
	xs = append(xs, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)))
	for _, c := range []struct {
		name string
		op   func(*G.Node) (*G.Node, error)
		f    func(y, x []float32)
		df   func(dx, x, dy []float32)
		out  bool // df reads the output, not x
	}{{"GELU", GELU, kernel.GELU[float32], kernel.GELUGrad[float32], false}, {"ELU", ELU, kernel.ELU[float32], kernel.ELUGrad[float32], true}} {
		g := G.NewGraph()
		x := G.NodeFromAny(g, tensor.New(tensor.WithShape(len(xs)), tensor.WithBacking(slices.Clone(xs))), G.WithName("x"))
		y, err := c.op(x)
		if err != nil {
			t.Fatal(err)
		}
		loss, err := G.Sum(y)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := G.Grad(loss, x); err != nil {
			t.Fatal(err)
		}
		runGraph(t, g)
		dx, err := x.Grad()
		if err != nil {
			t.Fatal(err)
		}
		want, wantDx, ones := make([]float32, len(xs)), make([]float32, len(xs)), make([]float32, len(xs))
		for i := range ones {
			ones[i] = 1
		}
		c.f(want, xs)
		if c.out {
			c.df(wantDx, want, ones)
		} else {
			c.df(wantDx, xs, ones)
		}
		for i, v := range y.Value().Data().([]float32) {
			if math.Float32bits(v) != math.Float32bits(want[i]) {
				t.Fatalf("%s(%v) = %v by the op, %v by kernel", c.name, xs[i], v, want[i])
			}
			if d := dx.Data().([]float32)[i]; math.Float32bits(d) != math.Float32bits(wantDx[i]) {
				t.Fatalf("%s'(%v) = %v by the op, %v by kernel", c.name, xs[i], d, wantDx[i])
			}
		}
	}
}
