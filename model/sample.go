package model

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"lipformer/kernel"
)

// Window is how Generate continues beyond the context T, where the absolute positions of
// the cached tokens would have to move and the cache becomes invalid.
type Window string

const (
	// Shift (the default): when the window is full, keep its last T/2 bytes, prefill them
	// again at positions 0.. once with the new token after them, and go on from there. Each
	// token sees between T/2 and T-1 previous bytes; a cycle of T - T/2 tokens costs a
	// prefill of T/2+1 positions and T - T/2 - 1 single steps: about 2 positions of work
	// per token.
	Shift Window = "shift"
	// Slide: every token beyond the context sees exactly the T-1 bytes before it (nanoGPT's
	// generate), so each one is a prefill of the last T bytes: T positions of work per
	// token once the window is full, the cost of sampling without a cache.
	Slide Window = "slide"
)

// ParseWindow validates a window policy name.
func ParseWindow(s string) (Window, error) {
	switch w := Window(s); w {
	case Shift, Slide:
		return w, nil
	}
	return "", fmt.Errorf("window policy %q, want shift or slide", s)
}

// Sampling are the settings of Generate.
type Sampling struct {
	Temperature float64 // the logits are divided by it; 0 is greedy decoding
	TopK        int     // draw among the TopK most likely bytes; 0: all
	Window      Window  // Shift or Slide
}

// Generate continues prompt (1..T token ids) by n tokens with a one-sequence decoder: a
// prefill of the prompt, then one cached step per token until the context T is full, and
// beyond it the window policy s.Window. Each token is drawn from the softmax of the logits
// divided by the temperature, restricted to the TopK most likely; rng may be nil for greedy
// decoding.
func Generate(d *Decoder, prompt []int, n int, s Sampling, rng *rand.Rand) ([]int, error) {
	out, err := GenerateBatch(d, [][]int{prompt}, n, s, rng)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// GenerateBatch continues each of prompts (one per sequence of the decoder's batch, all of
// the same length, 1..T ids) by n tokens as Generate does, the sequences in step: each
// position is one batched step (or prefill) of the decoder for all of them. At each
// position one uniform per sequence is drawn from rng in sequence order (none when
// greedy), so a batch of one draws what Generate draws, and the tokens are then picked in
// parallel.
func GenerateBatch(d *Decoder, prompts [][]int, n int, s Sampling, rng *rand.Rand) ([][]int, error) {
	t := d.Context()
	if len(prompts) != d.Batch() {
		return nil, fmt.Errorf("generate: %d prompts for a decoder of %d sequences", len(prompts), d.Batch())
	}
	p := len(prompts[0])
	if p == 0 || p > t {
		return nil, fmt.Errorf("generate: prompt of %d tokens, want 1..%d (the context)", p, t)
	}
	for i, pr := range prompts {
		if len(pr) != p {
			return nil, fmt.Errorf("generate: prompts of %d and %d tokens (0 and %d), want equal lengths", p, len(pr), i)
		}
	}
	if s.Temperature < 0 || s.TopK < 0 || n < 0 {
		return nil, fmt.Errorf("generate: temperature %g, top-k %d and %d tokens, want all >= 0", s.Temperature, s.TopK, n)
	}
	if _, err := ParseWindow(string(s.Window)); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	if s.Temperature > 0 && rng == nil {
		return nil, fmt.Errorf("generate: temperature %g needs a random source", s.Temperature)
	}
	out := make([][]int, len(prompts))
	if n == 0 {
		for i := range out {
			out[i] = []int{}
		}
		return out, nil
	}
	logits, err := d.PrefillBatch(prompts)
	if err != nil {
		return nil, err
	}
	seqs := make([][]int, len(prompts))
	for i, pr := range prompts {
		seqs[i] = append(make([]int, 0, p+n), pr...)
	}
	next, u := make([]int, len(seqs)), make([]float64, len(seqs))
	for {
		for i := range u {
			u[i] = draw(rng, s.Temperature)
		}
		kernel.ParallelFor(len(seqs), pickCost*len(logits[0]), func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				next[i] = pick(logits[i], s.Temperature, s.TopK, u[i])
			}
		})
		for i, id := range next {
			seqs[i] = append(seqs[i], id)
		}
		if len(seqs[0]) == p+n {
			for i, seq := range seqs {
				out[i] = seq[p:]
			}
			return out, nil
		}
		if logits, err = advance(d, seqs, s.Window); err != nil {
			return nil, err
		}
	}
}

// advance runs the last token of each sequence and returns the logits after it: a cached
// step while the context has room, else a prefill of the window w keeps.
func advance(d *Decoder, seqs [][]int, w Window) ([][]float64, error) {
	t, last := d.Context(), len(seqs[0])-1
	if d.Len() < t {
		tokens := make([]int, len(seqs))
		for i, seq := range seqs {
			tokens[i] = seq[last]
		}
		return d.StepBatch(tokens)
	}
	from := last - t/2
	if w == Slide {
		from = len(seqs[0]) - t
	}
	windows := make([][]int, len(seqs))
	for i, seq := range seqs {
		windows[i] = seq[from:]
	}
	return d.PrefillBatch(windows)
}

// pickCost is pick's cost per logit in elements of kernel.ParallelFor: with its conversions
// and sums, about 4 elements of a simple kernel.
const pickCost = 4

// draw is the uniform in [0, 1) that pick takes: one draw from rng, or 0 without one at
// temperature 0, where pick does not use it.
func draw(rng *rand.Rand, temperature float64) float64 {
	if temperature == 0 {
		return 0
	}
	return rng.Float64()
}

// pick chooses a token from logits with temperature and top-k: the most likely (the lowest
// id among equals) at temperature 0; else the one the uniform u in [0, 1) falls on in the
// softmax of logits / temperature over all ids in order, or over the top-k in order of
// decreasing logit.
func pick(logits []float64, temperature float64, topK int, u float64) int {
	best := 0
	for i, z := range logits {
		if z > logits[best] {
			best = i
		}
	}
	if temperature == 0 {
		return best
	}
	var order []int // nil: all ids in order
	if topK > 0 && topK < len(logits) {
		order = make([]int, len(logits))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { // by descending logit, ties by id
			switch {
			case logits[a] > logits[b]:
				return -1
			case logits[a] < logits[b]:
				return 1
			}
			return a - b
		})
		order = order[:topK]
	}
	n := len(logits)
	if order != nil {
		n = len(order)
	}
	id := func(i int) int {
		if order == nil {
			return i
		}
		return order[i]
	}
	w := make([]float32, n) // the probabilities, by the float32 softmax kernel of the ops
	for i := range w {
		w[i] = float32((logits[id(i)] - logits[best]) / temperature)
	}
	kernel.SoftmaxRow(w, w, n)
	var sum float64
	for _, p := range w {
		sum += float64(p)
	}
	u *= sum
	for i, p := range w {
		if u -= float64(p); u < 0 {
			return id(i)
		}
	}
	return id(n - 1)
}
