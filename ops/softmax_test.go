package ops

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/internal/ref"
)

func TestSoftmaxForwardMatchesReference(t *testing.T) {
	for _, causal := range []bool{false, true} {
		x := gradcheck.Rand(1, 3, 2, 5, 5) // (2, 5, 5)
		got := run1(t, x, func(n *G.Node) (*G.Node, error) { return Softmax(n, causal) })
		xs := x.Data().([]float64)
		for b := 0; b < 2; b++ {
			rows := make([][]float64, 5)
			for i := range rows {
				rows[i] = xs[(b*5+i)*5 : (b*5+i+1)*5]
			}
			want, err := ref.Softmax(rows, causal)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				for j := range want[i] {
					if g := got[(b*5+i)*5+j]; math.Abs(g-want[i][j]) > 1e-14 {
						t.Fatalf("causal=%t [%d,%d,%d]: got %v want %v", causal, b, i, j, g, want[i][j])
					}
				}
			}
		}
	}
}

func TestSoftmaxGradient(t *testing.T) {
	for _, causal := range []bool{false, true} {
		res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
			return Softmax(in[0], causal)
		}, []gradcheck.Input{{Name: "x", Value: gradcheck.Rand(2, 2, 3, 4, 4)}}, 7, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if res.Max > 1e-6 {
			t.Errorf("causal=%t: gradient relative error %g", causal, res.Max)
		}
	}
}

// TestGorgoniaSoftmaxFailsOnExtremeRows is the premise of TestSoftmaxExtremeRows:
// Gorgonia's own SoftMax returns NaN for a row far below the tensor's first element.
func TestGorgoniaSoftmaxFailsOnExtremeRows(t *testing.T) {
	g := G.NewGraph()
	x := G.NodeFromAny(g, tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{0, 1, 2, -1e4, -1e4 + 1, -1e4 + 2})), G.WithName("x"))
	y, err := G.SoftMax(x)
	if err != nil {
		t.Fatal(err)
	}
	runGraph(t, g)
	if v := y.Value().Data().([]float64)[3]; !math.IsNaN(v) {
		t.Skipf("Gorgonia's SoftMax gave %v, not NaN: the bug of docs/gorgonia.md is fixed in this version", v)
	}
}

// TestSoftmaxExtremeRows is docs/gorgonia.md's failing case: rows far from the tensor's first
// element and logits of +-1e4; ours stays finite and exact.
func TestSoftmaxExtremeRows(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		v := []float64{0, 1, 2, -1e4, -1e4 + 1, -1e4 + 2, 1e4, 1e4 - 1, 1e4 - 2}
		x := tensor.New(tensor.WithShape(3, 3), tensor.Of(dt))
		for i, f := range v {
			if dt == tensor.Float32 {
				x.Data().([]float32)[i] = float32(f)
			} else {
				x.Data().([]float64)[i] = f
			}
		}
		g := G.NewGraph()
		n := G.NodeFromAny(g, x, G.WithName("x"))
		y, err := Softmax(n, false)
		if err != nil {
			t.Fatal(err)
		}
		m := G.NewTapeMachine(g)
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		out := toF64(y.Value())
		want := []float64{0.09003057317038046, 0.24472847105479764, 0.6652409557748219}
		for r := 0; r < 3; r++ {
			w := want
			if r == 2 {
				w = []float64{want[2], want[1], want[0]}
			}
			for j := 0; j < 3; j++ {
				if math.Abs(out[r*3+j]-w[j]) > 1e-6 {
					t.Errorf("%v row %d: got %v, want %v", dt, r, out[r*3:r*3+3], w)
					break
				}
			}
		}
		m.Close()
	}
}

// run1 runs f on a single float64 input and returns its output's data.
func run1(t *testing.T, x *tensor.Dense, f func(*G.Node) (*G.Node, error)) []float64 {
	t.Helper()
	g := G.NewGraph()
	n := G.NodeFromAny(g, x, G.WithName("x"))
	y, err := f(n)
	if err != nil {
		t.Fatal(err)
	}
	runGraph(t, g)
	return toF64(y.Value())
}

// toF64 copies a value's data as float64.
func toF64(v G.Value) []float64 {
	switch d := v.Data().(type) {
	case []float64:
		return append([]float64(nil), d...)
	case []float32:
		out := make([]float64, len(d))
		for i, f := range d {
			out[i] = float64(f)
		}
		return out
	case float64:
		return []float64{d}
	case float32:
		return []float64{float64(d)}
	}
	return nil
}
