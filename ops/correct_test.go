package ops

import (
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestCorrectCountsTopOneHits: the op's count equals a plain-Go count of rows whose
// largest logit is the target (ties to the first), skipping negative targets, in both
// precisions; a target beyond the vocabulary is an error.
func TestCorrectCountsTopOneHits(t *testing.T) {
	const n, v = 40, 6
	rng := rand.New(rand.NewPCG(3, 4))
	logits := make([]float64, n*v)
	for i := range logits {
		logits[i] = float64(rng.IntN(3)) // many ties
	}
	targets := make([]int, n)
	want := 0
	for r := range targets {
		targets[r] = rng.IntN(v+1) - 1 // -1: not scored
		if targets[r] < 0 {
			continue
		}
		best := 0
		for j := 1; j < v; j++ {
			if logits[r*v+j] > logits[r*v+best] {
				best = j
			}
		}
		if best == targets[r] {
			want++
		}
	}
	if want == 0 || want == n {
		t.Fatalf("the draw gives %d hits: a test that cannot fail", want)
	}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		g := G.NewGraph()
		var lt *tensor.Dense
		if dt == tensor.Float32 {
			f := make([]float32, len(logits))
			for i, x := range logits {
				f[i] = float32(x)
			}
			lt = tensor.New(tensor.WithShape(n, v), tensor.WithBacking(f))
		} else {
			lt = tensor.New(tensor.WithShape(n, v), tensor.WithBacking(append([]float64(nil), logits...)))
		}
		ln := G.NodeFromAny(g, lt, G.WithName("logits"))
		tn := G.NodeFromAny(g, tensor.New(tensor.WithShape(n), tensor.WithBacking(append([]int(nil), targets...))), G.WithName("targets"))
		c, err := Correct(ln, tn)
		if err != nil {
			t.Fatal(err)
		}
		vm := G.NewTapeMachine(g)
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		var got float64
		switch x := c.Value().Data().(type) {
		case float32:
			got = float64(x)
		case float64:
			got = x
		}
		vm.Close()
		if int(got) != want {
			t.Errorf("%v: %v hits, want %d", dt, got, want)
		}
	}
	if _, err := countHits([]float64{0, 1}, []int{2}, 2); err == nil {
		t.Error("a target beyond the vocabulary was counted")
	}
}
