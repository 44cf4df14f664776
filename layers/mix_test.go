package layers

import (
	"fmt"
	"math"
	"testing"

	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/lipschitz"
)

// spreadMix is a Mix of width d and k taps with unequal taps and a nonzero bias,
// spectrally normalised to c when c > 0.
func spreadMix(d, k int, c float64) *Mix {
	m, err := NewMix("mix", d, k, c, 0.5, tensor.Float64, rng(3))
	if err != nil {
		panic(err)
	}
	m.Taps.fillNormal(rng(4), 1)
	m.Lin.B.fillNormal(rng(5), 0.3)
	return m
}

// mixRef is the branch in plain Go: y_t = sum_delta softmax(r)_delta x_{t-delta} W' + b
// within each sequence of n rows, W' = W times Scale.
func mixRef(m *Mix, x [][]float64, n int) [][]float64 {
	r, w, b, s := m.Taps.Float64s(), matOf(m.Lin.W), m.Lin.B.Float64s(), m.Scale()
	z := 0.0
	for _, v := range r {
		z += math.Exp(v)
	}
	d := len(b)
	y := make([][]float64, len(x))
	for i := range x {
		mixed := make([]float64, d)
		for delta := 0; delta < len(r) && delta <= i%n; delta++ {
			for j := range d {
				mixed[j] += math.Exp(r[delta]) / z * x[i-delta][j]
			}
		}
		y[i] = append([]float64(nil), b...)
		for o := range d {
			for j := range d {
				y[i][o] += mixed[j] * w.At(j, o) * s
			}
		}
	}
	return y
}

func TestMixForwardAndGradient(t *testing.T) {
	for _, c := range []float64{0, 0.9} {
		for _, k := range []int{1, 3, 5} {
			m := spreadMix(4, k, c)
			if c > 0 {
				m.SN.Iterate(3) // sigma near, not at, ||W||_2
			}
			x := gradcheck.Rand(9, 1, 10, 4) // two sequences of 5
			what := fmt.Sprintf("mix c=%g k=%d", c, k)
			assertRows(t, what, forward(t, x, 2, 5, m.Forward), mixRef(m, rowsOf(x), 5), 1e-13)
			checkGrad(t, what, m.Params(), x, 2, 5, m.Forward)
		}
	}
}

// TestMixLipschitzIsExact: the branch is linear, and its constants are attained: in the
// inf-norm exactly (a late row's taps sum to 1) and in the token norm within a search's
// reach (every token moving by W's top singular vector), so a measured norm above a
// constant fails, and so does one far below it. In the 2-norm of a finite sequence the
// mix's Toeplitz matrix has a norm below 1, and the constant is only an upper bound.
func TestMixLipschitzIsExact(t *testing.T) {
	const n, d = 6, 4
	for _, c := range []float64{0, 0.9} {
		m := spreadMix(d, 3, c)
		if c > 0 {
			m.SN.Iterate(3)
		}
		j := newMapJacobian(t, m.Forward, n, d).at(t, gradcheck.Rand(2, 1, n*d).Data().([]float64))
		inf, two := lipschitz.JacobianNormInf(j), lipschitz.JacobianNorm2(j)
		tok2, err := lipschitz.JacobianNormTok2(j, n, 50)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(inf-m.LipschitzInf()) > 1e-12*inf {
			t.Errorf("c=%g: ||J||_inf %v, certified %v", c, inf, m.LipschitzInf())
		}
		if two > m.Lipschitz2()*(1+1e-12) {
			t.Errorf("c=%g: ||J||_2 %v, certified %v", c, two, m.Lipschitz2())
		}
		if tok2 > m.Lipschitz2()*(1+1e-12) || tok2 < 0.99*m.Lipschitz2() {
			t.Errorf("c=%g: token norm of J %v, certified %v", c, tok2, m.Lipschitz2())
		}
	}
}

func TestNewMixRefusesBadSizes(t *testing.T) {
	for _, c := range []struct{ d, k int }{{4, 0}, {0, 2}} {
		if _, err := NewMix("mix", c.d, c.k, 0.9, 0.5, tensor.Float64, rng(1)); err == nil {
			t.Errorf("width %d, %d taps: no error", c.d, c.k)
		}
	}
}
