package ops

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/ref"
)

// expNeg32 is expNeg32s on one value.
func expNeg32(x float32) float32 {
	v := []float32{x}
	expNeg32s(v, v)
	return v[0]
}

// erf32 is erf32s on one value.
func erf32(x float32) float32 {
	v := []float32{x}
	erf32s(v, v)
	return v[0]
}

func TestExpNeg32(t *testing.T) {
	for i := 0; i <= 900000; i++ {
		x := float32(-float64(i) * 1e-4)
		got, want := float64(expNeg32(x)), math.Exp(float64(x))
		if x < -87.3 { // near or below the smallest normal float32: flushed to 0
			if got != 0 {
				t.Fatalf("exp(%v) = %v, want 0", x, got)
			}
			continue
		}
		if r := math.Abs(got-want) / want; r > 1.5e-7 {
			t.Fatalf("exp(%v) = %v, want %v (relative error %.3g)", x, got, want, r)
		}
	}
	if v := expNeg32(float32(math.NaN())); v == v {
		t.Errorf("exp(NaN) = %v", v)
	}
	if v := expNeg32(float32(math.Inf(-1))); v != 0 {
		t.Errorf("exp(-Inf) = %v", v)
	}
	if v := expNeg32(0); v != 1 {
		t.Errorf("exp(0) = %v", v)
	}
}

// TestErf32 on [-2.2, 2.2], which holds the arguments x/sqrt(2), |x| <= geluFastMax, of
// the GELU kernels.
func TestErf32(t *testing.T) {
	for i := -220000; i <= 220000; i++ {
		x := float32(float64(i) * 1e-5)
		if d := math.Abs(float64(erf32(x)) - math.Erf(float64(x))); d > 3e-7 {
			t.Fatalf("erf(%v) = %v, want %v", x, erf32(x), math.Erf(float64(x)))
		}
	}
}

// geluGrid is float32 inputs from -12 to 12 and the NaN.
func geluGrid() []float32 {
	var xs []float32
	for i := -120000; i <= 120000; i++ {
		xs = append(xs, float32(float64(i)*1e-4))
	}
	return append(xs, float32(math.NaN()))
}

// TestGELUFloat32MatchesReference: the float32 graph's GELU, through the fast kernel,
// agrees with the exact float64 function to 2e-7 (1 + |x|), NaN mapping to NaN.
func TestGELUFloat32MatchesReference(t *testing.T) {
	xs := geluGrid()
	x := tensor.New(tensor.WithShape(len(xs)), tensor.WithBacking(xs))
	g := G.NewGraph()
	y, err := GELU(G.NodeFromAny(g, x, G.WithName("x")))
	if err != nil {
		t.Fatal(err)
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	got := y.Value().Data().([]float32)
	for i, v := range xs {
		want := ref.GELU(float64(v))
		if math.IsNaN(want) != math.IsNaN(float64(got[i])) || math.Abs(float64(got[i])-want) > 2e-7*(1+math.Abs(float64(v))) {
			t.Fatalf("gelu(%v) = %v, want %v", v, got[i], want)
		}
	}
}

// TestGELUGradFloat32MatchesReference: the fast float32 derivative agrees with the exact
// float64 one to 3e-7 (1 + |x|).
func TestGELUGradFloat32MatchesReference(t *testing.T) {
	xs := geluGrid()
	dy := make([]float32, len(xs))
	for i := range dy {
		dy[i] = 1 - 0.5*float32(i%3)
	}
	dx := make([]float32, len(xs))
	geluGrad32(dx, xs, dy)
	for i, v := range xs {
		want := float64(dy[i]) * geluDeriv(float64(v))
		if math.IsNaN(want) != math.IsNaN(float64(dx[i])) || math.Abs(float64(dx[i])-want) > 3e-7*(1+math.Abs(float64(v))) {
			t.Fatalf("gelu'(%v) * %v = %v, want %v", v, dy[i], dx[i], want)
		}
	}
}
