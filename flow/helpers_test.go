package flow

import (
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/layers"
	"lipformer/model"
	"lipformer/spec"
)

// Shapes of the test models: B sequences of T tokens of width D.
const (
	testBatch = 2
	testT     = 8
	testD     = 8
	testC     = 0.9
)

// testStack is a float64 model of the architecture with random weights (seeded), its
// power iterations run to convergence, compiled as a stack. The architecture
// "invertible-l2+gain" is invertible-l2 whose MLP branches have an input gain of 4;
// "invertible-l2+ball" is the certified recipe (token2 bound, temperatures, position bias,
// MLP gain) with a ball norm of radius 0.3 sqrt(D) before each branch; "invertible-l2+mlps"
// the certified recipe with three MLP sub-blocks per block; "invertible-l2+mix" the
// certified recipe with two MLP sub-blocks and a mixing sub-block of 3 taps, unequal ones;
// "invertible-l2+triples" tokens of three bytes.
func testStack(t *testing.T, arch string, seed uint64) (*model.Model, *Stack) {
	t.Helper()
	name, variant, _ := strings.Cut(arch, "+")
	a, err := spec.ParseArch(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := model.Config{Arch: a, Layers: 2, Heads: 2, Width: testD, Context: testT, Vocab: 7, Norm: spec.NoLN,
		LipC: testC, Dtype: spec.Float64, Std: 0.3}
	switch variant {
	case "gain":
		cfg.MLPGain = 4
	case "ball":
		cfg = cfg.WithCertifiedRecipe()
		cfg.Norm, cfg.BallRadius = spec.BallPre, 0.3
	case "mlps":
		cfg = cfg.WithCertifiedRecipe()
		cfg.MLPBlocks = 3
	case "mix":
		cfg = cfg.WithCertifiedRecipe()
		cfg.MLPBlocks, cfg.Mix = 2, 3
	case "triples":
		cfg.TokenBytes = 3
	}
	m, err := model.New(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 3))
	for _, b := range m.Invertible() {
		if b.Mix != nil {
			v := b.Mix.Taps.Value.Data().([]float64)
			for i := range v {
				v[i] = r.NormFloat64()
			}
		}
	}
	m.PowerIterate(500)
	st, err := NewStack(m, testBatch)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return m, st
}

// input is the test input of a kind (random or adversarial) at a spread.
func input(kind string, spread float64, seed uint64) []float64 {
	if kind == "adversarial" {
		return Adversarial(testBatch, testT, testD, spread, seed)
	}
	return Random(testBatch, testT, testD, spread, seed)
}

// exactJacobian returns the (T*D, T*D) Jacobian of a sub-block's branch at one sequence x
// (T*D values) in one run, by the trick of layers/attention_test.go: the batch holds T*D
// copies of x and copy k's output is weighted by the k-th unit vector, so the gradient of
// copy k of the input is row k of the Jacobian.
func exactJacobian(t *testing.T, s *SubBlock, x []float64) *mat.Dense {
	t.Helper()
	nd := s.SeqLen * s.Width
	g, err := layers.NewGraph(tensor.Float64, nd, s.SeqLen, false)
	if err != nil {
		t.Fatal(err)
	}
	copies := make([]float64, nd*nd)
	sel := make([]float64, nd*nd) // copy k selects output element k
	for k := range nd {
		copy(copies[k*nd:(k+1)*nd], x)
		sel[k*nd+k] = 1
	}
	xn := G.NodeFromAny(g.G, tensor.New(tensor.WithShape(nd*s.SeqLen, s.Width), tensor.WithBacking(copies)), G.WithName("x"))
	y, err := s.branch(g, xn)
	if err != nil {
		t.Fatal(err)
	}
	r := G.NodeFromAny(g.G, tensor.New(tensor.WithShape(nd*s.SeqLen, s.Width), tensor.WithBacking(sel)), G.WithName("sel"))
	grads, err := G.Grad(G.Must(G.Sum(G.Must(G.HadamardProd(y, r)))), xn)
	if err != nil {
		t.Fatal(err)
	}
	var grad G.Value
	G.Read(grads[0], &grad)
	m := G.NewTapeMachine(g.G)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	return mat.NewDense(nd, nd, append([]float64(nil), grad.Data().([]float64)...))
}

// firstSequence is sequence 0 of a batch.
func firstSequence(x []float64) []float64 { return x[:testT*testD] }
