package train

import (
	"fmt"
	"math"

	"lipformer/data"
	"lipformer/model"
)

// Evaluate scores every byte of tokens but the first with an evaluation program:
// consecutive non-overlapping windows of the context length, so a byte is predicted from
// the bytes before it in its window (on average (T+1)/2 of them). It returns the mean loss
// in nats per scored byte and the number scored.
func Evaluate[T data.Token](p *model.Program, tokens []T) (float64, int, error) {
	return EvaluateStrided(p, tokens, p.Graph.SeqLen)
}

// EvaluateStrided is Evaluate with windows of the context length T advanced by stride
// (data.NewStridedEvalWindows): every byte is still scored once, and each byte after the
// first window is predicted from at least T - stride + 1 bytes, at about T / stride times
// the cost. Stride T is Evaluate.
func EvaluateStrided[T data.Token](p *model.Program, tokens []T, stride int) (float64, int, error) {
	w, err := data.NewStridedEvalWindows(tokens, p.Graph.SeqLen, stride, p.Graph.Batch)
	if err != nil {
		return 0, 0, err
	}
	nats, scored, err := evaluateShare(p, w, 0, 1)
	if err != nil {
		return 0, 0, err
	}
	if scored != w.Scored() {
		return 0, 0, fmt.Errorf("evaluate: scored %d bytes, want %d", scored, w.Scored())
	}
	return nats / float64(scored), scored, nil
}

// evaluateShare runs p on the batches first, first+every, first+2*every, ... of w and
// returns the summed loss in nats and the number of bytes scored.
func evaluateShare[T data.Token](p *model.Program, w *data.EvalWindows[T], first, every int) (float64, int, error) {
	var nats float64
	var scored int
	for i := first; i < w.Batches(); i += every {
		n, err := w.Batch(i, p.Inputs, p.Targets)
		if err != nil {
			return 0, 0, err
		}
		if err := p.Run(); err != nil {
			return 0, 0, fmt.Errorf("evaluate: batch %d: %w", i, err)
		}
		loss, err := p.Loss()
		if err != nil {
			return 0, 0, fmt.Errorf("evaluate: batch %d: %w", i, err)
		}
		nats += loss * float64(n)
		scored += n
	}
	return nats, scored, nil
}

// BPC converts nats per byte to bits per byte.
func BPC(nats float64) float64 { return nats / math.Ln2 }
