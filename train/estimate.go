package train

import (
	"fmt"
	"time"

	"lipformer/data"
)

// estimateSteps is the number of steps whose mean time the run-time estimate uses; they
// follow the session's first step, whose allocations make it slower than the rest.
const estimateSteps = 20

// timedBatches is the number of runs of one evaluation batch whose mean time costs the
// validations and final scores of the estimate, after a first run that allocates.
const timedBatches = 3

// runEstimate measures the steps of a session and the time of an evaluation batch, for
// the estimates of the time the run takes to end (logEstimate).
type runEstimate struct {
	steps    time.Duration // the summed time of the steps measured
	n        int           // the steps measured
	perBatch time.Duration // the time of an evaluation batch, once measured
}

// observe is called after each completed step of the session (0-based step numbers),
// which took took (its forward and backward passes, update and
// metrics row; not a validation after it). On rank 0 it logs an estimate of the time to
// the end of the run after estimateSteps steps following the first (slower: it
// allocates), and again before each periodic validation, from the mean of all the steps
// measured so far. A session of too few steps to measure logs none.
func (t *trainer[T]) observe(step int, took time.Duration) error {
	e := &t.est
	if !t.lead() || step == t.start {
		return nil
	}
	e.steps += took
	e.n++
	done := step + 1
	if e.n == estimateSteps || e.n > estimateSteps && done%t.Opt.EvalEvery == 0 && done < t.Opt.Steps {
		return t.logEstimate(done)
	}
	return nil
}

// logEstimate logs the estimated time from step done to the end of the run: the steps
// left at the mean time of those measured, and the validations and final scores, costed
// by timing one batch of the evaluation program (the mean of timedBatches runs after a
// first one, measured once). It is an estimate and says so: the measured times are
// extrapolated, on a machine whose load may change, and the n-gram baselines of the
// summary are not counted.
func (t *trainer[T]) logEstimate(done int) error {
	e, val, p := &t.est, t.val, t.eval
	if e.perBatch == 0 {
		w, err := data.NewEvalWindows(val, p.Graph.SeqLen, p.Graph.Batch)
		if err != nil {
			return fmt.Errorf("run-time estimate: %w", err)
		}
		if _, err := w.Batch(0, p.Inputs, p.Targets); err != nil {
			return fmt.Errorf("run-time estimate: %w", err)
		}
		for i := range 1 + timedBatches {
			t0 := time.Now()
			if err := p.Run(); err != nil {
				return fmt.Errorf("run-time estimate: %w", err)
			}
			if i > 0 { // the first run allocates
				e.perBatch += time.Since(t0) / timedBatches
			}
		}
	}
	perStep := e.steps / time.Duration(e.n)
	left := t.Opt.Steps - done
	scored := t.evalBytesLeft(done, len(val), len(t.Corpus.Test))
	training := time.Duration(left) * perStep
	evaluation := t.evaluationLeft(done)
	t.Log.Info(fmt.Sprintf("estimated time to the end of the run: %s (an estimate: %d steps at the %.0f ms a step measured over steps %d-%d, and %d bytes of validation and final scoring at the %.1f ms measured for an evaluation batch; the n-gram baselines of the summary are not counted)",
		(training+evaluation).Round(time.Second), left, perStep.Seconds()*1000, done-e.n+1, done, scored, e.perBatch.Seconds()*1000),
		"training", training.Round(time.Second).String(), "evaluation", evaluation.Round(time.Second).String())
	return nil
}

// evaluationLeft is the time that the validations after step done and the final scores
// take at the time measured for an evaluation batch, or 0 before it is measured.
func (t *trainer[T]) evaluationLeft(done int) time.Duration {
	p := t.eval
	scored := t.evalBytesLeft(done, len(t.val), len(t.Corpus.Test))
	window := p.Graph.SeqLen * p.Graph.Batch * t.comm().Size() // bytes a batch scores over the replicas
	return time.Duration((scored+window-1)/window) * t.est.perBatch
}

// evalBytesLeft is the number of bytes that the run's validations after step done and
// its final scores evaluate, with valid and test bytes in those splits: the periodic
// validations of EvalBytes (0: the whole split) every EvalEvery steps, the last one at
// the end, then the whole validation and test splits.
func (t *trainer[T]) evalBytesLeft(done, valid, test int) int {
	each := valid
	if t.Opt.EvalBytes > 0 && t.Opt.EvalBytes < valid {
		each = t.Opt.EvalBytes
	}
	validations := 1 // at the end
	for s := done + 1; s < t.Opt.Steps; s++ {
		if s%t.Opt.EvalEvery == 0 {
			validations++
		}
	}
	return validations*each + valid + test
}
