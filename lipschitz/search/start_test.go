package search

import (
	"math"
	"math/rand/v2"
	"testing"

	"lipformer/ops"
)

// An escaped start lies just past the plateau's edge: ||J|| exceeds (1 + rise)
// ||J(0)|| there and not at the scale one bisection step below, for tied L2
// (whose plateau is ||J||_inf = 1) and a random D = 4 layer through the graph.
func TestEscapeEdge(t *testing.T) {
	const rise = 0.1
	l2, err := NewScalar(ops.L2, 8, false, 1, 1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	graph := newGraphMap(t, newLayer(t, ops.L2, 4, 2, false, 0.5, 3), 3, 0)
	for name, m := range map[string]Map{"scalar": l2, "graph": graph} {
		obj, err := NewObjective(m, NormInf, 0)
		if err != nil {
			t.Fatal(err)
		}
		z := randVec(rand.New(rand.NewPCG(1, 2)), m.Len(), 1)
		x, err := escape(obj, z, rise)
		if err != nil {
			t.Fatal(err)
		}
		target := (1 + rise) * exactNorm(t, m, NormInf, make([]float64, m.Len()))
		below := make([]float64, len(x))
		for i, e := range x {
			below[i] = e * math.Pow(2, -1.0/(1<<escapeBisections))
		}
		if v, w := exactNorm(t, m, NormInf, x), exactNorm(t, m, NormInf, below); !(v > target) || !(w <= target*(1+1e-12)) {
			t.Errorf("%s: ||J|| = %v at the start, %v one step below, want > and <= %v", name, v, w, target)
		}
	}
}

// The restarts' noise has the standard deviation asked for, relative to the
// input's and over the square root of the number of tokens, and stays in the
// box.
func TestPerturbed(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	x := randVec(rng, 4000, 2)
	for _, w := range []int{1, 4} {
		y := perturbed(x, w, 0.5, 0, rng)
		d := make([]float64, len(x))
		for i := range x {
			d[i] = y[i] - x[i]
		}
		if got, want := sdOf(d), 0.5*sdOf(x)/math.Sqrt(float64(len(x)/w)); math.Abs(got-want) > 0.05*want {
			t.Errorf("width %d: noise sd %v, want %v", w, got, want)
		}
	}
	for _, e := range perturbed(x, 1, 300, 1, rng) {
		if math.Abs(e) > 1 {
			t.Fatalf("entry %v outside the box of radius 1", e)
		}
	}
}

// sdOf is the standard deviation of v's entries.
func sdOf(v []float64) float64 {
	mean, ss := 0.0, 0.0
	for _, e := range v {
		mean += e
	}
	mean /= float64(len(v))
	for _, e := range v {
		ss += (e - mean) * (e - mean)
	}
	return math.Sqrt(ss / float64(len(v)))
}

// Restarts take at most half the steps, in equal parts, and all the steps are used.
func TestClimbs(t *testing.T) {
	for _, c := range []struct {
		steps, restarts int
		want            []int
	}{{300, 0, []int{300}}, {300, 2, []int{150, 75, 75}}, {301, 2, []int{151, 75, 75}}, {5, 2, []int{3, 1, 1}}, {3, 2, []int{3, 0, 0}}} {
		got := Options{Steps: c.steps, Restarts: c.restarts}.climbs()
		if len(got) != len(c.want) {
			t.Fatalf("%d steps, %d restarts: %v, want %v", c.steps, c.restarts, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%d steps, %d restarts: %v, want %v", c.steps, c.restarts, got, c.want)
			}
		}
	}
}
