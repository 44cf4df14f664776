package ops

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/internal/ref"
	"lipformer/kernel"
)

// centredNorms returns the 2-norms of the rows of x minus their means.
func centredNorms(x *tensor.Dense) []float64 {
	var out []float64
	for _, r := range rows(x) {
		_, norm := centredRowNorm(r)
		out = append(out, norm)
	}
	return out
}

// splitLogRadius returns the log radius s (of r = sqrt(d) e^s) halfway, in r, between the
// two middle row norms of x, so that about half of the rows lie inside the ball and none
// within a finite-difference step of its sphere.
func splitLogRadius(t *testing.T, x *tensor.Dense, d int) float64 {
	t.Helper()
	norms := centredNorms(x)
	slices.Sort(norms)
	lo, hi := norms[len(norms)/2-1], norms[len(norms)/2]
	if hi-lo < 1e-3 {
		t.Fatalf("row norms %v and %v too close to split", lo, hi)
	}
	return math.Log((lo + hi) / 2 / math.Sqrt(float64(d)))
}

func TestBallNormMatchesReference(t *testing.T) {
	const d = 6
	x := gradcheck.Rand(1, 1, 3, 4, d)
	s := splitLogRadius(t, x, d)
	got := run1(t, x, func(n *G.Node) (*G.Node, error) {
		return BallNorm(n, G.NodeFromAny(n.Graph(), tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{s})), G.WithName("s")))
	})
	want, err := ref.BallNorm(rows(x), math.Sqrt(d)*math.Exp(s))
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "ball norm", got, want, 1e-14)
}

func TestBallNormGradient(t *testing.T) {
	const d = 7
	x := gradcheck.Rand(4, 1, 2, 5, d)
	s := splitLogRadius(t, x, d)
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return BallNorm(in[0], in[1])
	}, []gradcheck.Input{
		{Name: "x", Value: x},
		{Name: "s", Value: tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{s}))},
	}, 2, 1e-5)
	assertGrad(t, "ball norm", res, err)
}

func TestBallNormFloat32MatchesFloat64(t *testing.T) {
	const d = 9
	x64 := gradcheck.Rand(5, 2, 6, d)
	s := splitLogRadius(t, x64, d)
	v := x64.Data().([]float64)
	v32 := make([]float32, len(v))
	for i, a := range v {
		v32[i] = float32(a)
	}
	g := G.NewGraph()
	x := G.NodeFromAny(g, tensor.New(tensor.WithShape(6, d), tensor.WithBacking(v32)), G.WithName("x"))
	sn := G.NodeFromAny(g, tensor.New(tensor.WithShape(1), tensor.WithBacking([]float32{float32(s)})), G.WithName("s"))
	y, err := BallNorm(x, sn)
	if err != nil {
		t.Fatal(err)
	}
	runGraph(t, g)
	want, err := ref.BallNorm(rows(x64), math.Sqrt(d)*math.Exp(float64(float32(s))))
	if err != nil {
		t.Fatal(err)
	}
	got := y.Value().Data().([]float32)
	k := 0
	for i, r := range want {
		for j, w := range r {
			if math.Abs(float64(got[k])-w) > 1e-5*(1+math.Abs(w)) {
				t.Fatalf("[%d,%d]: float32 %v, float64 reference %v", i, j, got[k], w)
			}
			k++
		}
	}
}

// TestBallNormNonexpansive draws, for the kernel, pairs of rows at many scales and radii, some pairs close
// together, and fails if any pair's outputs are farther apart than its inputs in the 2-norm.
func TestBallNormNonexpansive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 2000 {
		d := 1 + rng.IntN(40)
		r := math.Exp(4 * (rng.Float64() - 0.5))
		scale := math.Exp(6 * (rng.Float64() - 0.5))
		a, b := make([]float64, d), make([]float64, d)
		near := trial%2 == 0
		for k := range d {
			a[k] = scale * rng.NormFloat64()
			b[k] = scale * rng.NormFloat64()
			if near {
				b[k] = a[k] + 1e-3*scale*rng.NormFloat64()
			}
		}
		out := make([]float64, 2*d)
		kernel.BallNormRows(out, append(slices.Clone(a), b...), d, r)
		var in2, out2 float64
		for k := range d {
			in2 += (a[k] - b[k]) * (a[k] - b[k])
			out2 += (out[k] - out[d+k]) * (out[k] - out[d+k])
		}
		if math.Sqrt(out2) > math.Sqrt(in2)*(1+1e-12) {
			t.Fatalf("d %d, r %g: ||B(a) - B(b)|| = %g > ||a - b|| = %g", d, r, math.Sqrt(out2), math.Sqrt(in2))
		}
	}
}

func TestBallNormRejectsBadLogRadius(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 4), G.WithName("x"))
	s := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("s"))
	if _, err := BallNorm(x, s); err == nil {
		t.Fatal("a log radius of 2 values accepted")
	}
}

// TestBallNormJacobianNonexpansive builds the exact Jacobian of one row from the gradient
// kernel (row k is the gradient of output k) at rows inside, outside and just outside
// the ball, and fails if its 2-norm exceeds 1.
func TestBallNormJacobianNonexpansive(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for trial := range 300 {
		d := 1 + rng.IntN(24)
		x := make([]float64, d)
		for k := range x {
			x[k] = rng.NormFloat64()
		}
		_, norm := centredRowNorm(x)
		r := norm * []float64{0.1, 0.999999, 1.5, 0.5}[trial%4]
		jac := mat.NewDense(d, d, nil)
		dy := make([]float64, d)
		for k := range d {
			clear(dy)
			dy[k] = 1
			row := make([]float64, d)
			kernel.BallNormGrad(row, x, dy, d, r)
			jac.SetRow(k, row)
		}
		var svd mat.SVD
		if !svd.Factorize(jac, mat.SVDNone) {
			t.Fatal("SVD failed")
		}
		if top := svd.Values(nil)[0]; top > 1+1e-12 {
			t.Fatalf("d %d, ||u|| %g, r %g: ||J||_2 = %.15g > 1", d, norm, r, top)
		}
	}
}

// centredRowNorm returns a row's mean and the 2-norm of the row minus it.
func centredRowNorm(x []float64) (mean, norm float64) {
	for _, v := range x {
		mean += v / float64(len(x))
	}
	for _, v := range x {
		norm += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(norm)
}
