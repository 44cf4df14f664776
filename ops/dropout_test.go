package ops

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
)

// TestDropoutGradientThroughKeptUnits: d sum(dropout(x)) / dx is exactly 1/(1-p) on kept
// units and 0 on dropped ones, and the forward is x times the same factor.
func TestDropoutGradientThroughKeptUnits(t *testing.T) {
	const p = 0.1
	g := G.NewGraph()
	x := G.NodeFromAny(g, gradcheck.Rand(1, 1, 40, 25), G.WithName("x"))
	y, mask, err := Dropout(x, p)
	if err != nil {
		t.Fatal(err)
	}
	mask.Resample(42, 7)
	loss := G.Must(G.Sum(y))
	grads, err := G.Grad(loss, x)
	if err != nil {
		t.Fatal(err)
	}
	runGraph(t, g)
	dx := grads[0].Value().Data().([]float64)
	xs := x.Value().Data().([]float64)
	ys := y.Value().Data().([]float64)
	dropped := 0
	for i, d := range dx {
		switch {
		case d == 0:
			dropped++
			if ys[i] != 0 {
				t.Fatalf("element %d: gradient 0 but output %v", i, ys[i])
			}
		case d == 1/(1-p):
			if ys[i] != xs[i]*(1/(1-p)) {
				t.Fatalf("element %d: output %v, want %v", i, ys[i], xs[i]*(1/(1-p)))
			}
		default:
			t.Fatalf("element %d: gradient %v, want 0 or %v", i, d, 1/(1-p))
		}
	}
	if frac := float64(dropped) / float64(len(dx)); math.Abs(frac-p) > 0.03 {
		t.Errorf("dropped %.3f of the elements, want about %v", frac, p)
	}
}

func TestDropoutMaskIsSeeded(t *testing.T) {
	draw := func(seed, stream uint64) []float32 {
		g := G.NewGraph()
		x := G.NewMatrix(g, tensor.Float32, G.WithShape(8, 16), G.WithName("x"))
		_, m, err := Dropout(x, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		m.Resample(seed, stream)
		return append([]float32(nil), m.mask.Data().([]float32)...)
	}
	a, b, c := draw(1, 2), draw(1, 2), draw(1, 3)
	same := func(u, v []float32) bool {
		for i := range u {
			if u[i] != v[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Error("same seed and stream gave different masks")
	}
	if same(a, c) {
		t.Error("another stream gave the same mask")
	}
}

func TestDropoutIdentityAtZero(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("x"))
	y, m, err := Dropout(x, 0)
	if err != nil || y != x || m != nil {
		t.Fatalf("p=0: got %v, %v, %v; want x itself", y, m, err)
	}
	if _, _, err := Dropout(x, 1); err == nil {
		t.Fatal("p=1 accepted")
	}
}
