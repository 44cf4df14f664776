package ops

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/internal/ref"
)

func TestCrossEntropyMatchesReference(t *testing.T) {
	logits := gradcheck.Rand(3, 2, 6, 5)
	targets := []int{0, 4, -1, 2, 3, -1}
	got := runXent(t, logits, targets)
	want, err := ref.CrossEntropy(rows(logits), targets)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-want) > 1e-13 {
		t.Fatalf("got %.17g want %.17g", got, want)
	}
}

func TestCrossEntropyGradient(t *testing.T) {
	tg := tensor.New(tensor.WithShape(6), tensor.WithBacking([]int{0, 4, -1, 2, 3, 1}))
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return CrossEntropy(in[0], in[1])
	}, []gradcheck.Input{{Name: "logits", Value: gradcheck.Rand(4, 2, 6, 5)}, {Name: "targets", Value: tg, NoGrad: true}}, 1, 1e-5)
	assertGrad(t, "cross-entropy", res, err)
}

// TestCrossEntropyExtremeLogits: logits of +-1e4, where Gorgonia's LogSoftMax gives -Inf.
func TestCrossEntropyExtremeLogits(t *testing.T) {
	l := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1e4, 1e4 - 1, -1e4, -1e4, -1e4 + 2, -1e4 + 1}))
	got := runXent(t, l, []int{1, 0})
	lse0 := 1e4 + math.Log(1+math.Exp(-1)+math.Exp(-2e4))
	lse1 := -1e4 + 2 + math.Log(1+math.Exp(-2)+math.Exp(-1))
	want := ((lse0 - (1e4 - 1)) + (lse1 - (-1e4))) / 2
	if math.IsNaN(got) || math.Abs(got-want) > 1e-9 {
		t.Fatalf("got %v want %v", got, want)
	}
}

// TestCrossEntropyGradientAtExtremeLogits: logits of +-1e4, where Gorgonia's built-ins give
// NaN, still have the exact gradient softmax - onehot (checked against finite differences
// at a step small relative to the logits' spacing).
func TestCrossEntropyGradientAtExtremeLogits(t *testing.T) {
	l := tensor.New(tensor.WithShape(3, 3), tensor.WithBacking([]float64{1e4, 1e4 - 1, 1e4 - 2, -1e4, -1e4 + 2, -1e4 + 1, 0, 1, 2}))
	tg := tensor.New(tensor.WithShape(3), tensor.WithBacking([]int{1, 0, 2}))
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return CrossEntropy(in[0], in[1])
	}, []gradcheck.Input{{Name: "logits", Value: l}, {Name: "targets", Value: tg, NoGrad: true}}, 1, 1e-4)
	assertGrad(t, "cross-entropy at +-1e4", res, err)
}

func TestCrossEntropyRejectsBadTarget(t *testing.T) {
	g := G.NewGraph()
	l := G.NodeFromAny(g, gradcheck.Rand(1, 1, 2, 3), G.WithName("logits"))
	tg := G.NodeFromAny(g, tensor.New(tensor.WithShape(2), tensor.WithBacking([]int{0, 3})), G.WithName("targets"))
	if _, err := CrossEntropy(l, tg); err != nil {
		t.Fatal(err)
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err == nil {
		t.Fatal("target 3 of a vocabulary of 3 was accepted")
	}
}

func runXent(t *testing.T, logits *tensor.Dense, targets []int) float64 {
	t.Helper()
	g := G.NewGraph()
	l := G.NodeFromAny(g, logits, G.WithName("logits"))
	tg := G.NodeFromAny(g, tensor.New(tensor.WithShape(len(targets)), tensor.WithBacking(targets)), G.WithName("targets"))
	loss, err := CrossEntropy(l, tg)
	if err != nil {
		t.Fatal(err)
	}
	runGraph(t, g)
	return loss.Value().Data().(float64)
}
