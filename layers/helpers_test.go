package layers

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/ops"
	"lipformer/spec"
)

// wrap makes a layers.Graph over an existing expression graph (for gradient checks).
func wrap(eg *G.ExprGraph, batch, seqLen int) *Graph {
	return &Graph{G: eg, Dtype: tensor.Float64, Batch: batch, SeqLen: seqLen, nodes: map[*Param]*G.Node{}}
}

// checkGrad checks the gradient of fwd with respect to x and every parameter.
func checkGrad(t *testing.T, what string, params []*Param, x *tensor.Dense, batch, seqLen int, fwd func(*Graph, *G.Node) (*G.Node, error)) {
	t.Helper()
	in := []gradcheck.Input{{Name: "x", Value: x}}
	for _, p := range params {
		in = append(in, gradcheck.Input{Name: p.Name, Value: p.Value})
	}
	res, err := gradcheck.Check(func(eg *G.ExprGraph, nodes []*G.Node) (*G.Node, error) {
		g := wrap(eg, batch, seqLen)
		for i, p := range params {
			g.Bind(p, nodes[i+1])
		}
		return fwd(g, nodes[0])
	}, in, 11, 1e-5)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for name, e := range res.RelErr {
		if e > 1e-6 {
			t.Errorf("%s: gradient of %s has relative error %.3g", what, name, e)
		}
	}
}

// forward runs fwd on x in a fresh float64 graph and returns the output rows.
func forward(t *testing.T, x *tensor.Dense, batch, seqLen int, fwd func(*Graph, *G.Node) (*G.Node, error)) [][]float64 {
	t.Helper()
	g, err := NewGraph(tensor.Float64, batch, seqLen, false)
	if err != nil {
		t.Fatal(err)
	}
	y, err := fwd(g, G.NodeFromAny(g.G, x, G.WithName("x")))
	if err != nil {
		t.Fatal(err)
	}
	m := G.NewTapeMachine(g.G)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	return rowsOf(y.Value().(*tensor.Dense))
}

// rowsOf copies a (N, D) float64 tensor into rows.
func rowsOf(x *tensor.Dense) [][]float64 {
	d := x.Shape()[1]
	v := x.Data().([]float64)
	out := make([][]float64, len(v)/d)
	for i := range out {
		out[i] = append([]float64(nil), v[i*d:(i+1)*d]...)
	}
	return out
}

// assertRows fails unless got and want agree elementwise to tol.
func assertRows(t *testing.T, what string, got, want [][]float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range want {
		for j := range want[i] {
			if d := got[i][j] - want[i][j]; d > tol || d < -tol {
				t.Fatalf("%s [%d,%d]: got %.17g want %.17g", what, i, j, got[i][j], want[i][j])
			}
		}
	}
}

// matOf is a parameter as a gonum matrix.
func matOf(p *Param) *mat.Dense { return denseOf(p) }

// rng is a seeded generator for tests.
func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0)) }

// plainArch is the architecture of plain blocks with attention of kind k.
func plainArch(k ops.AttentionKind) spec.Arch {
	return map[ops.AttentionKind]spec.Arch{ops.DotProduct: spec.DP, ops.L2: spec.L2, ops.L2Untied: spec.L2Untied}[k]
}

// invArch is the invertible architecture with attention of kind k, or plain l2-untied
// (which no invertible block takes) for ops.L2Untied.
func invArch(k ops.AttentionKind) spec.Arch {
	return map[ops.AttentionKind]spec.Arch{ops.DotProduct: spec.InvertibleDP, ops.L2: spec.InvertibleL2, ops.L2Untied: spec.L2Untied}[k]
}

// withDtype is s with parameters of dtype d.
func withDtype(s spec.Model, d spec.Dtype) spec.Model {
	s.Dtype = d
	return s
}
