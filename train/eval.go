package train

import (
	"context"
	"fmt"
	"math"

	"lipformer/data"
	"lipformer/model"
)

// Score is an evaluation of a split: the mean loss in nats per scored byte, the bytes
// scored, and how many of them the model's top-1 byte predicted.
type Score struct {
	Nats   float64
	Scored int
	Hits   int
}

// Accuracy is the fraction of scored bytes predicted top-1 (NaN when none were scored).
func (s Score) Accuracy() float64 {
	if s.Scored == 0 {
		return math.NaN()
	}
	return float64(s.Hits) / float64(s.Scored)
}

// Evaluate scores every byte of tokens but the first with an evaluation program:
// consecutive non-overlapping windows of the context length, so a byte is predicted from
// the bytes before it in its window (on average (T+1)/2 of them). It returns the mean loss
// in nats per scored byte and the number scored. It checks ctx between batches and
// returns ctx's error when it is cancelled.
func Evaluate[T data.Token](ctx context.Context, p *model.Program, tokens []T) (float64, int, error) {
	return EvaluateStrided(ctx, p, tokens, p.Graph.SeqLen)
}

// EvaluateStrided is Evaluate with windows of the context length T advanced by stride
// (data.NewStridedEvalWindows): every byte is still scored once, and each byte after the
// first window is predicted from at least T - stride + 1 bytes, at about T / stride times
// the cost. Stride T is Evaluate.
func EvaluateStrided[T data.Token](ctx context.Context, p *model.Program, tokens []T, stride int) (float64, int, error) {
	s, err := EvaluateScore(ctx, p, tokens, stride, nil)
	return s.Nats, s.Scored, err
}

// EvaluateScore is EvaluateStrided with the top-1 hits beside the loss, telling progress
// (when not nil) after each batch.
func EvaluateScore[T data.Token](ctx context.Context, p *model.Program, tokens []T, stride int, progress EvalProgress) (Score, error) {
	w, err := data.NewStridedEvalWindows(tokens, p.Graph.SeqLen, stride, p.Graph.Batch)
	if err != nil {
		return Score{}, err
	}
	s, err := evaluateShare(ctx, p, w, 0, 1, progress)
	if err != nil {
		return Score{}, err
	}
	if s.Scored != w.Scored() {
		return Score{}, fmt.Errorf("evaluate: scored %d bytes, want %d", s.Scored, w.Scored())
	}
	s.Nats /= float64(s.Scored)
	return s, nil
}

// evaluateShare runs p on the batches first, first+every, first+2*every, ... of w and
// returns the summed loss in nats (in Nats), the bytes scored and the top-1 hits. Before
// each batch it checks ctx, and returns its error when it is cancelled; after each it
// tells progress (when not nil) the batches of its share done.
func evaluateShare[T data.Token](ctx context.Context, p *model.Program, w *data.EvalWindows[T], first, every int, progress EvalProgress) (Score, error) {
	var s Score
	total := (w.Batches() - first + every - 1) / every
	for i := first; i < w.Batches(); i += every {
		if err := ctx.Err(); err != nil {
			return Score{}, err
		}
		n, err := w.Batch(i, p.Inputs, p.Targets)
		if err != nil {
			return Score{}, err
		}
		if err := p.Run(); err != nil {
			return Score{}, fmt.Errorf("evaluate: batch %d: %w", i, err)
		}
		loss, err := p.Loss()
		if err != nil {
			return Score{}, fmt.Errorf("evaluate: batch %d: %w", i, err)
		}
		hits, err := p.Hits()
		if err != nil {
			return Score{}, fmt.Errorf("evaluate: batch %d: %w", i, err)
		}
		s.Nats += loss * float64(n)
		s.Scored += n
		s.Hits += hits
		if progress != nil {
			progress((i-first)/every+1, total)
		}
	}
	return s, nil
}

// BPC converts nats per byte to bits per byte.
func BPC(nats float64) float64 { return nats / math.Ln2 }
