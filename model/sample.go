package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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

// Generate continues prompt (1..T token ids) by n tokens with the decoder: a prefill of the
// prompt, then one cached step per token until the context T is full, and beyond it the
// window policy s.Window. Each token is drawn from the softmax of the logits divided by the
// temperature, restricted to the TopK most likely; rng may be nil for greedy decoding.
func Generate(d *Decoder, prompt []int, n int, s Sampling, rng *rand.Rand) ([]int, error) {
	t := d.Context()
	if len(prompt) == 0 || len(prompt) > t {
		return nil, fmt.Errorf("generate: prompt of %d tokens, want 1..%d (the context)", len(prompt), t)
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
	if n == 0 {
		return []int{}, nil
	}
	logits, err := d.Prefill(prompt)
	if err != nil {
		return nil, err
	}
	seq := append(make([]int, 0, len(prompt)+n), prompt...)
	for {
		seq = append(seq, pick(logits, s.Temperature, s.TopK, rng))
		if len(seq) == len(prompt)+n {
			return seq[len(prompt):], nil
		}
		if logits, err = advance(d, seq, s.Window); err != nil {
			return nil, err
		}
	}
}

// advance runs the last token of seq and returns the logits after it: a cached step while
// the context has room, else a prefill of the window w keeps.
func advance(d *Decoder, seq []int, w Window) ([]float64, error) {
	t, last := d.Context(), len(seq)-1
	if d.Len() < t {
		return d.Step(seq[last])
	}
	if w == Slide {
		return d.Prefill(seq[len(seq)-t:])
	}
	return d.Prefill(seq[last-t/2:])
}

// pick draws a token from logits with temperature and top-k.
func pick(logits []float64, temperature float64, topK int, rng *rand.Rand) int {
	order := make([]int, len(logits))
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
