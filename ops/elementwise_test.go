package ops

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
)

func TestAddMatchesReference(t *testing.T) {
	a, b := gradcheck.Rand(1, 1, 3, 4), gradcheck.Rand(2, 1, 3, 4)
	got := run1(t, a, func(n *G.Node) (*G.Node, error) {
		return Add(n, G.NodeFromAny(n.Graph(), b, G.WithName("b")))
	})
	want := rows(a)
	for i := range want {
		want[i] = append([]float64(nil), want[i]...)
		for j := range want[i] {
			want[i][j] += rows(b)[i][j]
		}
	}
	assertClose(t, "add", got, want, 0)
}

func TestAddGradient(t *testing.T) {
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return Add(in[0], in[1])
	}, []gradcheck.Input{{Name: "a", Value: gradcheck.Rand(3, 1, 5, 4)}, {Name: "b", Value: gradcheck.Rand(4, 1, 5, 4)}}, 4, 1e-5)
	assertGrad(t, "add", res, err)
}

// TestAddResidualGradient: in x + f(x) the two gradients of x are summed.
func TestAddResidualGradient(t *testing.T) {
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		f, err := GELU(in[0])
		if err != nil {
			return nil, err
		}
		return Add(in[0], f)
	}, []gradcheck.Input{{Name: "x", Value: gradcheck.Rand(5, 1, 3, 4)}}, 4, 1e-5)
	assertGrad(t, "residual", res, err)
}

func TestMulMaskMatchesReference(t *testing.T) {
	x, m := gradcheck.Rand(1, 1, 3, 4), gradcheck.Rand(2, 1, 3, 4)
	got := run1(t, x, func(n *G.Node) (*G.Node, error) {
		return mulMask(n, G.NodeFromAny(n.Graph(), m, G.WithName("m")))
	})
	want := rows(x)
	for i := range want {
		want[i] = append([]float64(nil), want[i]...)
		for j := range want[i] {
			want[i][j] *= rows(m)[i][j]
		}
	}
	assertClose(t, "mask", got, want, 0)
}

func TestMulMaskGradient(t *testing.T) {
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return mulMask(in[0], in[1])
	}, []gradcheck.Input{{Name: "x", Value: gradcheck.Rand(3, 1, 5, 4)}, {Name: "m", Value: gradcheck.Rand(4, 1, 5, 4), NoGrad: true}}, 4, 1e-5)
	assertGrad(t, "mask", res, err)
}

func TestAddShapeErrors(t *testing.T) {
	g := G.NewGraph()
	a := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("a"))
	b := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("b"))
	c := G.NewMatrix(g, tensor.Float32, G.WithShape(2, 3), G.WithName("c"))
	if _, err := Add(a, b); err == nil {
		t.Error("shapes (2, 3) and (3, 2) accepted")
	}
	if _, err := Add(a, c); err == nil {
		t.Error("float64 and float32 accepted")
	}
}

// keepGraph is Linear, Add and CrossEntropy on x (4, 3) and w (3, 3), with the gradient
// with respect to w and a tape machine.
type keepGraph struct {
	y, dw *G.Node
	m     G.VM
}

func newKeepGraph(t *testing.T, x, w *tensor.Dense) keepGraph {
	t.Helper()
	g := G.NewGraph()
	xn := G.NodeFromAny(g, x, G.WithName("x"))
	wn := G.NodeFromAny(g, w, G.WithName("w"))
	y, err := Linear(xn, nil, wn)
	if err != nil {
		t.Fatal(err)
	}
	z, err := Add(y, xn)
	if err != nil {
		t.Fatal(err)
	}
	targets := tensor.New(tensor.WithShape(4), tensor.WithBacking([]int{0, 1, 2, 1}))
	loss, err := CrossEntropy(z, G.NodeFromAny(g, targets, G.WithName("t")))
	if err != nil {
		t.Fatal(err)
	}
	grads, err := G.Grad(loss, wn)
	if err != nil {
		t.Fatal(err)
	}
	return keepGraph{y, grads[0], G.NewTapeMachine(g)}
}

// run runs the graph once and returns y's and dw's tensors and a copy of their data.
func (k keepGraph) run(t *testing.T) (y, dw *tensor.Dense, ys, dws []float64) {
	t.Helper()
	if err := k.m.RunAll(); err != nil {
		t.Fatal(err)
	}
	y, dw = k.y.Value().(*tensor.Dense), k.dw.Value().(*tensor.Dense)
	ys, dws = toF64(y), toF64(dw)
	k.m.Reset()
	return
}

// TestOpsKeepTheirOutputs: after Reset the tape machine forgets every register, yet a
// second run writes each op's result into the tensors of the first run, with the values
// a fresh graph computes from the new inputs.
func TestOpsKeepTheirOutputs(t *testing.T) {
	x, w := gradcheck.Rand(1, 1, 4, 3), gradcheck.Rand(2, 1, 3, 3)
	k := newKeepGraph(t, x, w)
	defer k.m.Close()
	y1, dw1, _, _ := k.run(t)
	x.Data().([]float64)[0] += 1
	w.Data().([]float64)[4] -= 0.5
	y2, dw2, ys, dws := k.run(t)
	if y1 != y2 || dw1 != dw2 {
		t.Error("the second run allocated new outputs")
	}
	fresh := newKeepGraph(t, x, w)
	defer fresh.m.Close()
	_, _, wantY, wantDW := fresh.run(t)
	assertClose(t, "y of the second run", ys, [][]float64{wantY}, 0)
	assertClose(t, "dw of the second run", dws, [][]float64{wantDW}, 0)
}
