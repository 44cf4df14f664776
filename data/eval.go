package data

import "fmt"

// IgnoreTarget is the target of a padded position. The loss skips negative
// targets, so padded positions add nothing to the loss or to its count.
const IgnoreTarget = -1

// EvalWindows tiles a split for evaluation so that every token but the first
// is a target exactly once. Window w starts at s = w*T: its inputs are
// tokens[s:s+T] and its targets tokens[s+1:s+T+1]. The windows are
// consecutive and do not overlap; the last one is cut short by the end of the
// split, and its missing targets are [IgnoreTarget] and its missing inputs 0.
// Windows are grouped B to a batch in order, and the last batch is filled up
// with rows whose inputs are 0 and whose targets are all ignored.
//
// The first token of the split has no preceding context and is never a
// target, so [EvalWindows.Scored] is len(tokens)-1: a per-byte metric over
// the split is the summed loss divided by that count. Each window starts
// with no context: the target at offset t of a window is predicted from the
// t+1 tokens before it within the window, so the mean context is (T+1)/2
// tokens. This is cheaper than a sliding window that gives every target the
// full T tokens of context, and usually reports a higher loss than one.
type EvalWindows[T Token] struct {
	tokens     []T
	ctx, batch int
	windows    int
}

// NewEvalWindows returns the evaluation windows of T = ctx tokens, B = batch
// to a batch, over tokens, which must hold at least 2 tokens.
func NewEvalWindows[T Token](tokens []T, ctx, batch int) (*EvalWindows[T], error) {
	if ctx < 1 || batch < 1 {
		return nil, fmt.Errorf("data: evaluation windows need a context and a batch size of at least 1, got context %d and batch size %d", ctx, batch)
	}
	if len(tokens) < 2 {
		return nil, fmt.Errorf("data: evaluation windows: the split has %d token(s), need at least 2 to score one", len(tokens))
	}
	targets := len(tokens) - 1
	return &EvalWindows[T]{tokens: tokens, ctx: ctx, batch: batch, windows: ceilDiv(targets, ctx)}, nil
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
		for t := range e.ctx {
			p := w*e.ctx + t
			x[row+t], y[row+t] = 0, IgnoreTarget
			if w >= e.windows {
				continue
			}
			if p < len(e.tokens) {
				x[row+t] = int(e.tokens[p])
			}
			if p+1 < len(e.tokens) {
				y[row+t] = int(e.tokens[p+1])
				scored++
			}
		}
	}
	return scored, nil
}

// ceilDiv returns ceil(a/b) for a >= 0 and b > 0.
func ceilDiv(a, b int) int { return (a + b - 1) / b }
