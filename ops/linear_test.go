package ops

import (
	"fmt"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
)

// linearCase is x (n, in) times weights of the given widths, with or without a bias, the
// weights stored (in, width) or with trans (width, in).
type linearCase struct {
	n, in  int
	widths []int
	bias   bool
	trans  bool
}

func (c linearCase) String() string {
	return fmt.Sprintf("n=%d,in=%d,widths=%v,bias=%t,trans=%t", c.n, c.in, c.widths, c.bias, c.trans)
}

var linearCases = []linearCase{
	{5, 4, []int{3}, true, false},
	{6, 3, []int{2, 3, 2}, false, false},
	{4, 5, []int{3, 1}, true, false},
	{5, 4, []int{3}, false, true},
	{4, 3, []int{2, 4}, true, true},
}

// inputs draws x, the weights and (with bias) the bias of a case, in the op's order.
func (c linearCase) inputs(seed uint64) []gradcheck.Input {
	in := []gradcheck.Input{{Name: "x", Value: gradcheck.Rand(seed, 1, c.n, c.in)}}
	out := 0
	for i, w := range c.widths {
		shape := []int{c.in, w}
		if c.trans {
			shape = []int{w, c.in}
		}
		in = append(in, gradcheck.Input{Name: fmt.Sprintf("w%d", i), Value: gradcheck.Rand(seed+uint64(i)+1, 0.7, shape...)})
		out += w
	}
	if c.bias {
		in = append(in, gradcheck.Input{Name: "b", Value: gradcheck.Rand(seed+99, 1, out)})
	}
	return in
}

// build applies Linear to the input nodes of a case.
func (c linearCase) build(in []*G.Node) (*G.Node, error) {
	var b *G.Node
	ws := in[1 : 1+len(c.widths)]
	if c.bias {
		b = in[len(in)-1]
	}
	if c.trans {
		return LinearT(in[0], b, ws...)
	}
	return Linear(in[0], b, ws...)
}

// transpose returns the (c, r) transpose of a row-major (r, c) matrix.
func transpose(a []float64, r, c int) []float64 {
	out := make([]float64, len(a))
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out[j*r+i] = a[i*c+j]
		}
	}
	return out
}

func TestLinearMatchesReference(t *testing.T) {
	for _, c := range linearCases {
		in := c.inputs(3)
		g := G.NewGraph()
		nodes := make([]*G.Node, len(in))
		for i, v := range in {
			nodes[i] = G.NodeFromAny(g, v.Value, G.WithName(v.Name))
		}
		y, err := c.build(nodes)
		if err != nil {
			t.Fatal(err)
		}
		m := G.NewTapeMachine(g)
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		got := toF64(y.Value())
		m.Close()
		// want[r] is the concatenation over weights of x_r w_i, plus the bias.
		x := in[0].Value.Data().([]float64)
		want := make([][]float64, c.n)
		for i, w := range c.widths {
			wv := in[1+i].Value.Data().([]float64)
			if c.trans {
				wv = transpose(wv, w, c.in)
			}
			p := matmul(x, c.n, c.in, wv, w)
			for r := range want {
				want[r] = append(want[r], p[r*w:(r+1)*w]...)
			}
		}
		if c.bias {
			b := in[len(in)-1].Value.Data().([]float64)
			for r := range want {
				for j := range want[r] {
					want[r][j] += b[j]
				}
			}
		}
		assertClose(t, "linear "+c.String(), got, want, 1e-12)
	}
}

func TestLinearGradient(t *testing.T) {
	for _, c := range linearCases {
		res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
			return c.build(in)
		}, c.inputs(7), 5, 1e-5)
		assertGrad(t, "linear "+c.String(), res, err)
	}
}

// TestLinearSharedWeight: a weight used for two blocks receives the sum of both blocks'
// gradients.
func TestLinearSharedWeight(t *testing.T) {
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return Linear(in[0], nil, in[1], in[1])
	}, []gradcheck.Input{{Name: "x", Value: gradcheck.Rand(1, 1, 4, 3)}, {Name: "w", Value: gradcheck.Rand(2, 1, 3, 2)}}, 6, 1e-5)
	assertGrad(t, "linear shared", res, err)
}

func TestLinearShapeErrors(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 3), G.WithName("x"))
	w := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("w"))
	bad := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("bad"))
	b := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("b"))
	w32 := G.NewMatrix(g, tensor.Float32, G.WithShape(3, 2), G.WithName("w32"))
	for name, f := range map[string]func() (*G.Node, error){
		"no weight":       func() (*G.Node, error) { return Linear(x, nil) },
		"transposed":      func() (*G.Node, error) { return LinearT(x, nil, w) },
		"inner dimension": func() (*G.Node, error) { return Linear(x, nil, w, bad) },
		"bias width":      func() (*G.Node, error) { return Linear(x, b, w) },
		"dtype":           func() (*G.Node, error) { return Linear(x, nil, w32) },
	} {
		if _, err := f(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
