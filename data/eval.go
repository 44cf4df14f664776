package data

import "fmt"

// IgnoreTarget is the target of a padded position. The loss skips negative
// targets, so padded positions add nothing to the loss or to its count.
const IgnoreTarget = -1

// EvalWindows tiles a split for evaluation so that every token but the first
// is a target exactly once. Window w starts at s = w*S, S the stride: its inputs
// are tokens[s:s+T] and its targets tokens[s+1:s+T+1]. Window 0 scores all its
// targets; every later window scores only its last S, the targets no earlier
// window scored, each predicted from at least T-S+1 tokens. With S = T (the
// default) the windows are consecutive and do not overlap, and a target at
// offset t is predicted from the t+1 tokens before it within its window, a
// mean context of (T+1)/2; with S = 1 every target after the first T has the
// full T tokens of context, the sliding-window protocol of published enwik8
// numbers, at T times the cost. The last window is cut short by the end of the
// split: its missing targets are [IgnoreTarget] and its missing inputs 0.
// Windows are grouped B to a batch in order, and the last batch is filled up
// with rows whose inputs are 0 and whose targets are all ignored.
//
// The first token of the split has no preceding context and is never a
// target, so [EvalWindows.Scored] is len(tokens)-1: a per-byte metric over
// the split is the summed loss divided by that count.
type EvalWindows[T Token] struct {
	tokens             []T
	ctx, stride, batch int
	windows            int
}

// NewEvalWindows returns the non-overlapping evaluation windows (stride T) of T = ctx
// tokens, B = batch to a batch, over tokens, which must hold at least 2 tokens.
func NewEvalWindows[T Token](tokens []T, ctx, batch int) (*EvalWindows[T], error) {
	return NewStridedEvalWindows(tokens, ctx, ctx, batch)
}

// NewStridedEvalWindows returns the evaluation windows of T = ctx tokens advanced by
// stride (1 <= stride <= ctx), B = batch to a batch, over tokens, which must hold at least
// 2 tokens.
func NewStridedEvalWindows[T Token](tokens []T, ctx, stride, batch int) (*EvalWindows[T], error) {
	if ctx < 1 || batch < 1 {
		return nil, fmt.Errorf("data: evaluation windows need a context and a batch size of at least 1, got context %d and batch size %d", ctx, batch)
	}
	if stride < 1 || stride > ctx {
		return nil, fmt.Errorf("data: evaluation stride %d, want 1 <= stride <= context %d", stride, ctx)
	}
	if len(tokens) < 2 {
		return nil, fmt.Errorf("data: evaluation windows: the split has %d token(s), need at least 2 to score one", len(tokens))
	}
	windows := 1 + ceilDiv(max(0, len(tokens)-1-ctx), stride)
	return &EvalWindows[T]{tokens: tokens, ctx: ctx, stride: stride, batch: batch, windows: windows}, nil
}

// Scored returns the number of scored targets over all batches: len(tokens)-1.
func (e *EvalWindows[T]) Scored() int { return len(e.tokens) - 1 }

// Windows returns the number of windows that hold at least one target.
func (e *EvalWindows[T]) Windows() int { return e.windows }

// Batches returns the number of batches, numbered from 0.
func (e *EvalWindows[T]) Batches() int { return ceilDiv(e.windows, e.batch) }

// Batch fills x and y, each of length B*T in row-major (B, T) order, with
// batch i, and returns the number of its targets that are scored (not
// [IgnoreTarget]).
func (e *EvalWindows[T]) Batch(i int, x, y []int) (int, error) {
	n := e.batch * e.ctx
	if len(x) != n || len(y) != n {
		return 0, fmt.Errorf("data: evaluation batch: x and y must have B*T = %d*%d = %d elements, got %d and %d", e.batch, e.ctx, n, len(x), len(y))
	}
	if i < 0 || i >= e.Batches() {
		return 0, fmt.Errorf("data: evaluation batch %d is outside [0, %d)", i, e.Batches())
	}
	scored := 0
	for r := range e.batch {
		w := i*e.batch + r
		row := r * e.ctx
		first := e.ctx - e.stride // the first scored offset of windows after the first
		if w == 0 {
			first = 0
		}
		for t := range e.ctx {
			p := w*e.stride + t
			x[row+t], y[row+t] = 0, IgnoreTarget
			if w >= e.windows {
				continue
			}
			if p < len(e.tokens) {
				x[row+t] = int(e.tokens[p])
			}
			if t >= first && p+1 < len(e.tokens) {
				y[row+t] = int(e.tokens[p+1])
				scored++
			}
		}
	}
	return scored, nil
}

// ceilDiv returns ceil(a/b) for a >= 0 and b > 0.
func ceilDiv(a, b int) int { return (a + b - 1) / b }
