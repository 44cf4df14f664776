package model

import (
	"fmt"
	"lipformer/spec"
)

// Decoder computes the model incrementally, one position after another, with a key/value
// cache: Prefill runs a prompt at positions 0.., each Step one more token at the next
// position, and both return the logits of the next byte, the same (up to rounding) as the
// Sample program's row at that position. A batch decoder (NewBatchDecoder) runs several
// independent sequences in step, each with its own cache (PrefillBatch, StepBatch).
//
// The decoder holds a copy of the weights the model applies, those computed from its
// parameters evaluated once by the model's own ops: make a new decoder after the
// parameters change. It computes in the model's dtype with package kernel's functions, the
// ones the ops run. Positions are absolute and at most the context T: when the cache is
// full, start again with Prefill (Generate's windows do). A Decoder is not safe for
// concurrent use. docs/performance.md ("Decoder") describes what it caches and how it
// shares a step out between the cores.
type Decoder struct {
	net decoderNet
}

// decoderNet is the decoder in one element type.
type decoderNet interface {
	// run computes each sequence's tokens at positions pos.. (caching them) and returns
	// the logits (V) after each sequence's last.
	run(tokens [][]int, pos int) [][]float64
	config() Config
	batch() int
	cached() int
	setCached(n int)
}

// NewDecoder makes a decoder of one sequence of the model's current weights, with an empty
// cache.
func (m *Model) NewDecoder() (*Decoder, error) { return m.NewBatchDecoder(1) }

// NewBatchDecoder makes a decoder of b sequences decoded in step, with empty caches. It
// holds b T (7D + 2F) values of scratch, 2 b T D cached per layer (keys and values; tied
// L2 b T D, its keys) and b H T keys' squared norms per L2 layer, T (T + 1) of
// attention scratch per goroutine, and its copy of the weights, in float32 a second,
// packed copy of each matrix. It refuses a model with attention off (SetAttentionOff),
// which it would compute with its attention.
func (m *Model) NewBatchDecoder(b int) (*Decoder, error) {
	if b < 1 {
		return nil, fmt.Errorf("decoder: batch of %d sequences, want >= 1", b)
	}
	if off := m.AttentionOff(); len(off) > 0 {
		return nil, fmt.Errorf("decoder: the attention of layers %v is off, an ablation for evaluation programs only", off)
	}
	var net decoderNet
	var err error
	if m.Cfg.Dtype == spec.Float64 {
		net, err = newDecoder[float64](m, b)
	} else {
		net, err = newDecoder[float32](m, b)
	}
	if err != nil {
		return nil, err
	}
	return &Decoder{net: net}, nil
}

// Context is T, the most positions the decoder caches.
func (d *Decoder) Context() int { return d.net.config().Context }

// Batch is the number of sequences the decoder runs in step.
func (d *Decoder) Batch() int { return d.net.batch() }

// Len is the number of positions cached.
func (d *Decoder) Len() int { return d.net.cached() }

// Reset empties the cache.
func (d *Decoder) Reset() { d.net.setCached(0) }

// Prefill empties the cache of a one-sequence decoder, runs tokens (1..T ids) at positions
// 0.. and returns the logits of the byte after the last.
func (d *Decoder) Prefill(tokens []int) ([]float64, error) {
	if err := d.single("prefill"); err != nil {
		return nil, err
	}
	out, err := d.PrefillBatch([][]int{tokens})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// Step runs one more token at the next position of a one-sequence decoder and returns the
// logits of the byte after it. It fails when the cache is full (Len() == Context()).
func (d *Decoder) Step(token int) ([]float64, error) {
	if err := d.single("step"); err != nil {
		return nil, err
	}
	out, err := d.StepBatch([]int{token})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// single fails unless the decoder runs one sequence.
func (d *Decoder) single(what string) error {
	if b := d.Batch(); b != 1 {
		return fmt.Errorf("decoder: %s of one sequence on a decoder of %d: use the batch methods", what, b)
	}
	return nil
}

// PrefillBatch empties the caches, runs each sequence's tokens (Batch() sequences of the
// same length, 1..T ids) at positions 0.. and returns the logits after each one's last.
func (d *Decoder) PrefillBatch(tokens [][]int) ([][]float64, error) {
	if b := d.Batch(); len(tokens) != b {
		return nil, fmt.Errorf("decoder: prefill of %d sequences, want the batch of %d", len(tokens), b)
	}
	n := len(tokens[0])
	if t := d.Context(); n == 0 || n > t {
		return nil, fmt.Errorf("decoder: prefill of %d tokens, want 1..%d (the context)", n, t)
	}
	for s, seq := range tokens {
		if len(seq) != n {
			return nil, fmt.Errorf("decoder: prefill of sequences of %d and %d tokens (0 and %d): a batch runs in step, want equal lengths", n, len(seq), s)
		}
		if err := d.check(seq, s); err != nil {
			return nil, err
		}
	}
	d.Reset()
	return d.net.run(tokens, 0), nil
}

// StepBatch runs one more token per sequence (Batch() ids) at the next position and
// returns the logits after each. It fails when the caches are full (Len() == Context()).
func (d *Decoder) StepBatch(tokens []int) ([][]float64, error) {
	n := d.Len()
	if n == d.Context() {
		return nil, fmt.Errorf("decoder: the cache holds the whole context of %d positions: prefill a shorter window", n)
	}
	if n == 0 {
		return nil, fmt.Errorf("decoder: step on an empty cache: prefill first")
	}
	if b := d.Batch(); len(tokens) != b {
		return nil, fmt.Errorf("decoder: step of %d tokens, want one per sequence of the batch of %d", len(tokens), b)
	}
	rows := make([][]int, len(tokens))
	for s := range tokens {
		rows[s] = tokens[s : s+1]
		if err := d.check(rows[s], s); err != nil {
			return nil, err
		}
	}
	return d.net.run(rows, n), nil
}

// check returns an error naming the first token id of sequence s outside the vocabulary.
func (d *Decoder) check(tokens []int, s int) error {
	v := d.net.config().Vocab
	for i, id := range tokens {
		if id < 0 || id >= v {
			where := fmt.Sprintf("at %d", i)
			if d.Batch() > 1 {
				where = fmt.Sprintf("at %d of sequence %d", i, s)
			}
			return fmt.Errorf("decoder: token %d %s is not in the vocabulary of %d (ids 0..%d)", id, where, v, v-1)
		}
	}
	return nil
}
