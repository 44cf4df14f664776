package ops

import (
	"math"
	"runtime"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/kernel"
)

// mixReference is the causal mix in plain Go: y_t = sum_delta softmax(r)_delta x_{t-delta}
// within each sequence of t rows of width d.
func mixReference(x, r []float64, t, d int) []float64 {
	z := 0.0
	for _, v := range r {
		z += math.Exp(v)
	}
	y := make([]float64, len(x))
	for row := range len(x) / d {
		for delta := 0; delta < len(r) && delta <= row%t; delta++ {
			a := math.Exp(r[delta]) / z
			for j := range d {
				y[row*d+j] += a * x[(row-delta)*d+j]
			}
		}
	}
	return y
}

func TestCausalMixMatchesReference(t *testing.T) {
	for _, c := range []struct{ b, t, d, k int }{{3, 5, 6, 3}, {2, 7, 16, 1}, {2, 7, 16, 7}, {1, 9, 8, 4}} {
		x, r := gradcheck.Rand(3, 1, c.b*c.t, c.d), gradcheck.Rand(4, 1, c.k)
		want := mixReference(x.Data().([]float64), r.Data().([]float64), c.t, c.d)
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			g := G.NewGraph()
			y, err := CausalMix(G.NodeFromAny(g, asDtype(x, dt), G.WithName("x")), G.NodeFromAny(g, asDtype(r, dt), G.WithName("r")), c.t)
			if err != nil {
				t.Fatal(err)
			}
			runGraph(t, g)
			tol := 1e-14
			if dt == tensor.Float32 {
				tol = 2e-6
			}
			for i, v := range toF64(y.Value()) {
				if math.Abs(v-want[i]) > tol {
					t.Fatalf("%+v %v: element %d is %v, want %v", c, dt, i, v, want[i])
				}
			}
		}
	}
}

func TestCausalMixGradient(t *testing.T) {
	for _, c := range []struct{ b, t, d, k int }{{2, 5, 6, 3}, {2, 4, 8, 4}} {
		res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
			return CausalMix(in[0], in[1], c.t)
		}, []gradcheck.Input{{Name: "x", Value: gradcheck.Rand(1, 1, c.b*c.t, c.d)}, {Name: "r", Value: gradcheck.Rand(2, 1, c.k)}}, 3, 1e-5)
		assertGrad(t, "causal mix", res, err)
	}
}

// TestCausalMixFloat32Gradients checks the float32 kernels, which take the vector paths
// for widths that are multiples of 8, against the float64 ones.
func TestCausalMixFloat32Gradients(t *testing.T) {
	const b, tl, d, k = 3, 9, 16, 5
	x, dy, r := gradcheck.Rand(5, 1, b*tl, d).Data().([]float64), gradcheck.Rand(6, 1, b*tl, d).Data().([]float64), gradcheck.Rand(7, 1, k).Data().([]float64)
	x32, dy32, r32 := to32(x), to32(dy), to32(r)
	dx, dx32 := make([]float64, len(x)), make([]float32, len(x))
	kernel.CausalMixGradInput(dx, dy, MixTaps(r), tl, d)
	kernel.CausalMixGradInput(dx32, dy32, MixTaps(r32), tl, d)
	for i := range dx {
		if math.Abs(dx[i]-float64(dx32[i])) > 1e-6 {
			t.Fatalf("dx[%d]: float32 %v, float64 %v", i, dx32[i], dx[i])
		}
	}
	da, da32 := kernel.CausalMixGradTaps(x, dy, k, tl, d), kernel.CausalMixGradTaps(x32, dy32, k, tl, d)
	for j := range da {
		if math.Abs(da[j]-da32[j]) > 1e-4 {
			t.Fatalf("da[%d]: float32 %v, float64 %v", j, da32[j], da[j])
		}
	}
}

// TestCausalMixGradTapsAnyCores checks that the taps' gradient, a sum over sequences that
// the cores share, is the same bits on 1 and 4 cores.
func TestCausalMixGradTapsAnyCores(t *testing.T) {
	const b, tl, d, k = 16, 64, 64, 16
	x, dy := to32(gradcheck.Rand(8, 1, b*tl, d).Data().([]float64)), to32(gradcheck.Rand(9, 1, b*tl, d).Data().([]float64))
	prev := runtime.GOMAXPROCS(1)
	one := kernel.CausalMixGradTaps(x, dy, k, tl, d)
	runtime.GOMAXPROCS(4)
	four := kernel.CausalMixGradTaps(x, dy, k, tl, d)
	runtime.GOMAXPROCS(prev)
	for j := range one {
		if one[j] != four[j] {
			t.Fatalf("da[%d]: %v on 1 core, %v on 4", j, one[j], four[j])
		}
	}
}

func TestCausalMixRefusesBadShapes(t *testing.T) {
	g := G.NewGraph()
	x := G.NodeFromAny(g, gradcheck.Rand(1, 1, 10, 4), G.WithName("x"))
	for _, c := range []struct {
		r      *tensor.Dense
		seqLen int
	}{{gradcheck.Rand(2, 1, 3), 3}, {gradcheck.Rand(2, 1, 6), 5}, {gradcheck.Rand(2, 1, 2, 2), 5}, {gradcheck.Rand(2, 1, 2), 0}} {
		if _, err := CausalMix(x, G.NodeFromAny(g, c.r, G.WithName("r")), c.seqLen); err == nil {
			t.Errorf("taps %v, sequences of %d: no error", c.r.Shape(), c.seqLen)
		}
	}
}

func to32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}
