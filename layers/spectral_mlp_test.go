package layers

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/lipschitz"
)

// gainedMLP is a SpectralMLP of width 4 and hidden 8 with nonzero biases and log gain s.
func gainedMLP(s float64) *SpectralMLP {
	m := NewSpectralMLP("mlp", 4, 8, 0.9, 0.5, tensor.Float64, rng(6))
	m.Fc.B.fillNormal(rng(7), 0.3)
	m.Proj.B.fillNormal(rng(8), 0.3)
	m.AddGain("mlp", s)
	return m
}

// gainedMLPRef is h(e^s x) / e^s + (1 - 1/e^s) b2 in plain Go, h the branch without the gain:
// the output bias b2 is not divided by the gain.
func gainedMLPRef(t *testing.T, m *SpectralMLP, x [][]float64) [][]float64 {
	t.Helper()
	a := math.Exp(m.LogGain.Float64s()[0])
	in := make([][]float64, len(x))
	for i, r := range x {
		in[i] = make([]float64, len(r))
		for j, v := range r {
			in[i][j] = a * v
		}
	}
	y := spectralMLPRef(t, m, in)
	b2 := m.Proj.B.Float64s()
	for _, r := range y {
		for j := range r {
			r[j] = (r[j]-b2[j])/a + b2[j]
		}
	}
	return y
}

func TestSpectralMLPGainForwardAndGradient(t *testing.T) {
	for _, s := range []float64{-1.3, 0, 2.1} {
		m := gainedMLP(s)
		x := gradcheck.Rand(9, 1, 5, 4)
		what := fmt.Sprintf("spectral mlp, log gain %g", s)
		assertRows(t, what, forward(t, x, 1, 5, m.Forward), gainedMLPRef(t, m, rowsOf(x)), 1e-12)
		checkGrad(t, what, m.Params(), x, 1, 5, m.Forward)
	}
}

// TestSpectralMLPGainKeepsLipschitz: at every gain, and at inputs from 1e-3 to 1e2 where
// the activation is linear or bends, the exact Jacobian of the branch on one token,
// e^s W1/sigma1 diag(ELU'(z)) c e^-s W2/sigma2, has a 2-norm of at most Lipschitz2.
func TestSpectralMLPGainKeepsLipschitz(t *testing.T) {
	for _, s := range []float64{-3, 0, 1.5, 4} {
		m := gainedMLP(s)
		lip := m.Lipschitz2()
		a := math.Exp(s)
		var w1, w2 mat.Dense
		w1.Scale(a*m.Fc.C/sigmaRef(m.Fc.SN), denseOf(m.Fc.W))         // (4, 8)
		w2.Scale(m.Proj.C/(a*sigmaRef(m.Proj.SN)), denseOf(m.Proj.W)) // (8, 4)
		var worst float64
		for k, spread := range []float64{1e-3, 0.1, 1, 10, 100} {
			x := gradcheck.Rand(uint64(20+k), spread, 16, 4)
			z := rowsOf(x)
			for _, row := range z {
				var pre mat.Dense
				pre.Mul(mat.NewDense(1, 4, row), &w1)
				d := mat.NewDense(8, 8, nil)
				for j, b := range m.Fc.B.Float64s() {
					if v := pre.At(0, j) + b; v > 0 {
						d.Set(j, j, 1)
					} else {
						d.Set(j, j, math.Exp(v))
					}
				}
				var jac, tmp mat.Dense
				tmp.Mul(&w1, d)
				jac.Mul(&tmp, &w2)
				n := lipschitz.Norm2(&jac)
				if n > lip {
					t.Errorf("log gain %g, spread %g: Jacobian 2-norm %.15g above the certified %.15g", s, spread, n, lip)
				}
				worst = max(worst, n/lip)
			}
		}
		t.Logf("log gain %g: largest measured/certified ratio %.3f", s, worst)
	}
}
