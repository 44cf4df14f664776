package layers

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/internal/ref"
	"lipformer/lipschitz"
	"lipformer/ops"
)

// TestPowerIterationConverges: sigma = u^T W v never exceeds ||W||_2 (exact, by SVD) and
// reaches it; W / sigma then has spectral norm 1.
func TestPowerIterationConverges(t *testing.T) {
	for _, c := range []struct {
		dt  tensor.Dtype
		tol float64 // float32 vectors hold sigma to about their rounding
	}{{tensor.Float64, 1e-10}, {tensor.Float32, 1e-6}} {
		for _, shape := range [][2]int{{6, 24}, {24, 6}, {8, 8}} {
			w := newParam("w", c.dt, true, shape[0], shape[1])
			w.fillNormal(rng(uint64(shape[0])), 0.5)
			sn := NewSpectralNorm(w, rng(3))
			exact := lipschitz.Norm2(denseOf(w))
			for range 20 {
				if s := sn.Sigma(); s > exact*(1+c.tol) || !(s > 0) {
					t.Fatalf("%v %v: sigma %.15g, want in (0, ||W||_2 = %.15g]", c.dt, shape, s, exact)
				}
				sn.Iterate(10)
			}
			if r := sn.Lipschitz2(); math.Abs(r-1) > c.tol {
				t.Errorf("%v %v: ||W||_2 / sigma = %.15g after 250 iterations, want 1", c.dt, shape, r)
			}
		}
	}
}

// spectralRef is x (c W / sigma) + b in plain Go, sigma from the layer's buffers.
func spectralRef(t *testing.T, l *SpectralLinear, x [][]float64) [][]float64 {
	t.Helper()
	var w mat.Dense
	w.Scale(l.C/sigmaRef(l.SN), denseOf(l.W))
	y, err := ref.Linear(x, &w, l.B.Float64s())
	if err != nil {
		t.Fatal(err)
	}
	return y
}

// sigmaRef is u^T W v by gonum.
func sigmaRef(sn *SpectralNorm) float64 {
	u, v := mat.NewVecDense(len(sn.U.Float64s()), sn.U.Float64s()), mat.NewVecDense(len(sn.V.Float64s()), sn.V.Float64s())
	return mat.Inner(u, denseOf(sn.W), v)
}

func TestSpectralLinearForwardAndGradient(t *testing.T) {
	l := NewSpectralLinear("sl", 4, 6, 0.8, 0.5, tensor.Float64, rng(1))
	l.B.fillNormal(rng(2), 0.3)
	l.SN.U.setFloat64s(unit([]float64{1, 2, -1, 0.5})) // not the top singular pair
	if sigmaRef(l.SN) < 0 {
		l.SN.U.setFloat64s(unit([]float64{-1, -2, 1, -0.5}))
	}
	x := gradcheck.Rand(3, 1, 5, 4)
	assertRows(t, "spectral linear", forward(t, x, 1, 5, l.Forward), spectralRef(t, l, rowsOf(x)), 1e-13)
	checkGrad(t, "spectral linear", []*Param{l.W, l.B}, x, 1, 5, l.Forward)
}

func TestSpectralMLPForwardAndGradient(t *testing.T) {
	m := NewSpectralMLP("mlp", 4, 8, 0.9, 0.5, tensor.Float64, rng(6))
	m.Fc.B.fillNormal(rng(7), 0.3)
	m.Proj.B.fillNormal(rng(8), 0.3)
	x := gradcheck.Rand(9, 1, 5, 4)
	assertRows(t, "spectral mlp", forward(t, x, 1, 5, m.Forward), spectralMLPRef(t, m, rowsOf(x)), 1e-13)
	checkGrad(t, "spectral mlp", m.Params(), x, 1, 5, m.Forward)
	if l := m.Lipschitz2(); l < 0.9 {
		t.Errorf("certified constant %.12g below c = 0.9: sigma overestimates a norm", l)
	}
	for _, sn := range m.SpectralNorms() {
		sn.Iterate(500)
	}
	if l := m.Lipschitz2(); math.Abs(l-0.9) > 1e-9 {
		t.Errorf("certified constant %.12g after 550 power iterations, want c = 0.9", l)
	}
}

// spectralMLPRef is the SpectralMLP in plain Go.
func spectralMLPRef(t *testing.T, m *SpectralMLP, x [][]float64) [][]float64 {
	t.Helper()
	h := spectralRef(t, m.Fc, x)
	for _, r := range h {
		for j, v := range r {
			if v <= 0 {
				r[j] = math.Exp(v) - 1
			}
		}
	}
	return spectralRef(t, m.Proj, h)
}

// TestPowerIterationAllocatesNothing: SpectralNorm.Iterate and Attention.PowerIterate, run
// before every training step, allocate nothing, in float32 (the kernels' assembly where the
// processor has it) and float64.
func TestPowerIterationAllocatesNothing(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		w := newParam("w", dt, true, 128, 64)
		w.fillNormal(rng(5), 0.5)
		sn := NewSpectralNorm(w, rng(6))
		if n := testing.AllocsPerRun(20, func() { sn.Iterate(3) }); n != 0 {
			t.Errorf("%v: SpectralNorm.Iterate allocates %v times a call", dt, n)
		}
		a, err := NewAttention("attn", ops.L2, 32, 4, true, 0.7, 0.7, dt, rng(7))
		if err != nil {
			t.Fatal(err)
		}
		a.AddPower("attn")
		if n := testing.AllocsPerRun(20, func() { a.PowerIterate(3) }); n != 0 {
			t.Errorf("%v: Attention.PowerIterate allocates %v times a call", dt, n)
		}
	}
}
