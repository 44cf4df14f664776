package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Generate continues prompt (token ids) by n tokens with a Sample program (batch 1). Each
// step runs the model on the last T tokens at positions 0.. (the causal mask makes the
// padding after them irrelevant) and draws the next token from the softmax of its logits
// divided by temperature, restricted to the topK most likely (0: all). Temperature 0 is
// greedy decoding.
func Generate(p *Program, prompt []int, n int, temperature float64, topK int, rng *rand.Rand) ([]int, error) {
	t := len(p.Inputs)
	if p.Graph.Batch != 1 {
		return nil, fmt.Errorf("generate: program of batch %d, want a sampling program of batch 1", p.Graph.Batch)
	}
	if len(prompt) == 0 {
		return nil, fmt.Errorf("generate: empty prompt")
	}
	if temperature < 0 || topK < 0 {
		return nil, fmt.Errorf("generate: temperature %g and top-k %d, want both >= 0", temperature, topK)
	}
	seq := append([]int(nil), prompt...)
	for range n {
		window := seq[max(0, len(seq)-t):]
		clear(p.Inputs)
		copy(p.Inputs, window)
		if err := p.Run(); err != nil {
			return nil, err
		}
		seq = append(seq, pick(p.Logits(len(window)-1), temperature, topK, rng))
	}
	return seq[len(prompt):], nil
}

// pick draws a token from logits with temperature and top-k.
func pick(logits []float64, temperature float64, topK int, rng *rand.Rand) int {
	order := make([]int, len(logits))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return logits[order[a]] > logits[order[b]] })
	if temperature == 0 {
		return order[0]
	}
	if topK > 0 && topK < len(order) {
		order = order[:topK]
	}
	w := make([]float64, len(order))
	var sum float64
	for i, id := range order {
		w[i] = math.Exp((logits[id] - logits[order[0]]) / temperature)
		sum += w[i]
	}
	u := rng.Float64() * sum
	for i, id := range order {
		if u -= w[i]; u < 0 {
			return id
		}
	}
	return order[len(order)-1]
}
