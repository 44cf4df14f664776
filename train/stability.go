package train

import (
	"fmt"
	"math"
	"slices"
)

// StabilityConfig sets how loss spikes are detected: a step's loss is a
// spike when it exceeds SpikeFactor times the median of the previous
// SpikeWindow finite losses (of all previous finite losses while fewer have
// been seen).
type StabilityConfig struct {
	SpikeFactor float64 // k, > 1
	SpikeWindow int     // W, >= 1
}

// DefaultStabilityConfig returns k = 2 and W = 100. Minibatch noise in the
// loss is a few percent, far below a doubling, so k = 2 flags only real
// blow-ups; a window of 100 steps makes the median robust to a burst of
// spikes while following the loss as it falls during training.
func DefaultStabilityConfig() StabilityConfig {
	return StabilityConfig{SpikeFactor: 2, SpikeWindow: 100}
}

// StabilitySummary holds the stability figures of a run (docs/math.md, "The language model").
// Step fields are -1 when there is no such step.
type StabilitySummary struct {
	Steps              int     // steps observed
	NonFiniteSteps     int     // steps whose loss or gradient norm was NaN or infinite
	FirstNonFiniteStep int     // first such step
	LossSpikes         int     // steps whose loss was a spike
	FirstSpikeStep     int     // first spike
	MaxGradNorm        float64 // largest finite gradient norm, 0 when none
	MaxGradNormStep    int     // step of MaxGradNorm
	InitialLoss        float64 // loss of the first step observed, 0 when none
	FinalLoss          float64 // loss of the last step observed, 0 when none
	Diverged           bool    // FinalLoss > InitialLoss, or NonFiniteSteps > 0
	SpikeFactor        float64 // the k used
	SpikeWindow        int     // the W used
}

// Stability accumulates the stability figures of a run from the loss and
// gradient norm of each training step. Observe does not allocate. A
// Stability is not safe for concurrent use.
type Stability struct {
	cfg    StabilityConfig
	recent []float64 // the last W finite losses, in arrival order once full: oldest at recent[next]
	next   int
	sorted []float64 // recent, sorted
	sum    StabilitySummary
}

// NewStability returns an empty accumulator, or an error for a spike factor
// not above 1 or a window below 1.
func NewStability(cfg StabilityConfig) (*Stability, error) {
	if !(cfg.SpikeFactor > 1) || math.IsInf(cfg.SpikeFactor, 1) {
		return nil, fmt.Errorf("stability: spike factor %v is not a finite number above 1", cfg.SpikeFactor)
	}
	if cfg.SpikeWindow < 1 {
		return nil, fmt.Errorf("stability: spike window %d is not at least 1", cfg.SpikeWindow)
	}
	return &Stability{
		cfg:    cfg,
		recent: make([]float64, 0, cfg.SpikeWindow),
		sorted: make([]float64, 0, cfg.SpikeWindow),
		sum: StabilitySummary{
			FirstNonFiniteStep: -1, FirstSpikeStep: -1, MaxGradNormStep: -1,
			SpikeFactor: cfg.SpikeFactor, SpikeWindow: cfg.SpikeWindow,
		},
	}, nil
}

// Observe records one training step: its loss (nats) and its gradient norm
// before clipping.
func (s *Stability) Observe(step int, loss, gradNorm float64) {
	sum := &s.sum
	sum.Steps++
	if sum.Steps == 1 {
		sum.InitialLoss = loss
	}
	sum.FinalLoss = loss
	lossOK, normOK := isFinite(loss), isFinite(gradNorm)
	if !lossOK || !normOK {
		if sum.NonFiniteSteps == 0 {
			sum.FirstNonFiniteStep = step
		}
		sum.NonFiniteSteps++
	}
	if normOK && (sum.MaxGradNormStep < 0 || gradNorm > sum.MaxGradNorm) {
		sum.MaxGradNorm, sum.MaxGradNormStep = gradNorm, step
	}
	if !lossOK {
		return
	}
	if len(s.sorted) > 0 && loss > s.cfg.SpikeFactor*s.median() {
		if sum.LossSpikes == 0 {
			sum.FirstSpikeStep = step
		}
		sum.LossSpikes++
	}
	s.remember(loss)
}

// Summary returns the figures so far.
func (s *Stability) Summary() StabilitySummary {
	sum := s.sum
	sum.Diverged = sum.NonFiniteSteps > 0 || sum.FinalLoss > sum.InitialLoss
	return sum
}

// remember adds a finite loss to the window, dropping the oldest when full.
func (s *Stability) remember(loss float64) {
	if len(s.recent) < cap(s.recent) {
		s.recent = append(s.recent, loss)
	} else {
		old := s.recent[s.next]
		s.recent[s.next] = loss
		s.next = (s.next + 1) % len(s.recent)
		i, _ := slices.BinarySearch(s.sorted, old)
		s.sorted = slices.Delete(s.sorted, i, i+1)
	}
	i, _ := slices.BinarySearch(s.sorted, loss)
	s.sorted = slices.Insert(s.sorted, i, loss)
}

// median returns the median of the window, which is not empty.
func (s *Stability) median() float64 {
	n := len(s.sorted)
	if n%2 == 1 {
		return s.sorted[n/2]
	}
	return (s.sorted[n/2-1] + s.sorted[n/2]) / 2
}

// isFinite reports whether x is neither NaN nor infinite.
func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
