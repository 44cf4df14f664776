package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"

	"lipformer/internal/gradcheck"
	"lipformer/internal/ref"
)

func TestLayerNormMatchesReference(t *testing.T) {
	x, gamma, beta := gradcheck.Rand(1, 3, 4, 6), gradcheck.Rand(2, 1, 6), gradcheck.Rand(3, 1, 6)
	got := run1(t, x, func(n *G.Node) (*G.Node, error) {
		return LayerNorm(n, G.NodeFromAny(n.Graph(), gamma, G.WithName("g")), G.NodeFromAny(n.Graph(), beta, G.WithName("b")), 1e-5)
	})
	want, err := ref.LayerNorm(rows(x), gamma.Data().([]float64), beta.Data().([]float64), 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "layernorm", got, want, 1e-12)
}

func TestLayerNormGradient(t *testing.T) {
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return LayerNorm(in[0], in[1], in[2], 1e-5)
	}, []gradcheck.Input{
		{Name: "x", Value: gradcheck.Rand(4, 2, 5, 7)},
		{Name: "gamma", Value: gradcheck.Rand(5, 1, 7)},
		{Name: "beta", Value: gradcheck.Rand(6, 1, 7)},
	}, 2, 1e-5)
	assertGrad(t, "layernorm", res, err)
}

// TestRowStatsFloat32: the mean and 1/sqrt(var + eps) of float32 rows of every length up
// to 70 and at odd offsets (the vector kernels take whole blocks of 8, a loop the rest)
// equal a float64 two-pass computation to 1e-12 relative, and the float64 path too.
func TestRowStatsFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]float32, 400)
	for i := range data {
		data[i] = float32(3 + 2*rng.NormFloat64())
	}
	for _, n := range append(seq(1, 70), 128, 256, 333) {
		for _, off := range []int{0, 1, 5} {
			row := data[off : off+n]
			var want, variance float64
			for _, v := range row {
				want += float64(v)
			}
			want /= float64(n)
			for _, v := range row {
				variance += (float64(v) - want) * (float64(v) - want)
			}
			wantR := 1 / math.Sqrt(variance/float64(n)+1e-5)
			row64 := make([]float64, n)
			for i, v := range row {
				row64[i] = float64(v)
			}
			for name, got := range map[string][2]float64{"float32": pair(rowStats(row, 1e-5)), "float64": pair(rowStats(row64, 1e-5))} {
				if math.Abs(got[0]-want) > 1e-12*math.Abs(want) || math.Abs(got[1]-wantR) > 1e-12*wantR {
					t.Fatalf("%s row of %d at %d: mean %v rstd %v, want %v %v", name, n, off, got[0], got[1], want, wantR)
				}
			}
		}
	}
}

// seq is lo, lo+1, ..., hi.
func seq(lo, hi int) []int {
	var s []int
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}

// pair packs two results into an array.
func pair(a, b float64) [2]float64 { return [2]float64{a, b} }
