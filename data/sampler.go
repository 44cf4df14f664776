package data

import (
	"fmt"
	"math/rand/v2"
)

// Token is the type of the token ids of a split: int, as [Vocab.Encode]
// returns them, or uint8, as [Vocab.EncodeCompact] returns them.
type Token interface{ ~int | ~uint8 }

// Sampler draws training batches of random windows from a split. Batch k is
// a pure function of the seed and k, whatever batches were drawn before, so
// a run resumed at step k sees exactly the batches it would have seen
// without the interruption, with no random state to save.
type Sampler[T Token] struct {
	tokens     []T
	ctx, batch int
	seed       uint64
}

// NewSampler returns a Sampler of batches of batch windows of ctx inputs
// (and ctx targets) from tokens. The split must hold at least ctx+1 tokens.
func NewSampler[T Token](tokens []T, ctx, batch int, seed uint64) (*Sampler[T], error) {
	if ctx < 1 || batch < 1 {
		return nil, fmt.Errorf("data: sampler needs a context and a batch size of at least 1, got context %d and batch size %d", ctx, batch)
	}
	if len(tokens) < ctx+1 {
		return nil, fmt.Errorf("data: sampler: the split has %d tokens, fewer than context+1 = %d", len(tokens), ctx+1)
	}
	return &Sampler[T]{tokens: tokens, ctx: ctx, batch: batch, seed: seed}, nil
}

// Context returns T, the number of inputs (and of targets) per window.
func (s *Sampler[T]) Context() int { return s.ctx }

// BatchSize returns B, the number of windows per batch.
func (s *Sampler[T]) BatchSize() int { return s.batch }

// Batch fills x and y, each of length B*T in row-major (B, T) order, with
// batch number step: row b is a window of T+1 consecutive tokens starting at
// a uniformly random offset, its first T tokens in x and its last T in y, so
// that y[b*T+t] is the token that follows x[b*T+t].
func (s *Sampler[T]) Batch(step int, x, y []int) error {
	if n := s.batch * s.ctx; len(x) != n || len(y) != n {
		return fmt.Errorf("data: sampler batch: x and y must have B*T = %d*%d = %d elements, got %d and %d", s.batch, s.ctx, n, len(x), len(y))
	}
	return s.Rows(step, 0, x, y)
}

// Rows fills x and y, of equal length R*T, with rows first to first+R-1 of batch
// number step, exactly as Batch fills them: the rows r*R to (r+1)*R-1 of replica r of
// a data-parallel job of B/R replicas, say, which together see the batch that Batch
// draws. Rows past the batch are refused.
func (s *Sampler[T]) Rows(step, first int, x, y []int) error {
	if len(x) != len(y) || len(x)%s.ctx != 0 {
		return fmt.Errorf("data: sampler rows: x and y must have the same multiple of T = %d elements, got %d and %d", s.ctx, len(x), len(y))
	}
	rows := len(x) / s.ctx
	if first < 0 || first+rows > s.batch {
		return fmt.Errorf("data: sampler rows %d to %d of a batch of %d", first, first+rows-1, s.batch)
	}
	if step < 0 {
		return fmt.Errorf("data: sampler batch: step %d is negative", step)
	}
	rng := rand.New(rand.NewPCG(mix64(s.seed), mix64(uint64(step))))
	starts := len(s.tokens) - s.ctx // windows may start at 0 .. len-ctx-1
	for range first {
		rng.IntN(starts) // the offsets of the rows before first
	}
	for b := range rows {
		window := s.tokens[rng.IntN(starts):]
		row := b * s.ctx
		for t := range s.ctx {
			x[row+t] = int(window[t])
			y[row+t] = int(window[t+1])
		}
	}
	return nil
}

// mix64 is the SplitMix64 finaliser, a bijection that scatters nearby
// numbers, so that consecutive steps seed distant generator states.
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
