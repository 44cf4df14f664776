package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// pick draws each id with its softmax probability at the temperature, over all ids and
// over the top k: frequencies of 200000 draws within 5 standard errors.
func TestPickFrequencies(t *testing.T) {
	logits := []float64{0.5, 2, -1, 1.5, 2}
	rng := rand.New(rand.NewPCG(8, 9))
	for _, c := range []struct {
		temp float64
		topK int
	}{{1, 0}, {0.5, 0}, {2, 3}} {
		keep := []int{0, 1, 2, 3, 4}
		if c.topK > 0 {
			keep = []int{1, 4, 3} // descending logit, ties by id
		}
		p := make([]float64, len(logits))
		var z float64
		for _, id := range keep {
			p[id] = math.Exp(logits[id] / c.temp)
			z += p[id]
		}
		const draws = 200000
		count := make([]float64, len(logits))
		for range draws {
			count[pick(logits, c.temp, c.topK, rng.Float64())]++
		}
		for id := range p {
			p[id] /= z
			se := math.Sqrt(p[id] * (1 - p[id]) / draws)
			if f := count[id] / draws; math.Abs(f-p[id]) > 5*se+1e-12 {
				t.Errorf("temperature %g top-%d: id %d drawn %.4f of the time, want %.4f", c.temp, c.topK, id, f, p[id])
			}
		}
	}
}
