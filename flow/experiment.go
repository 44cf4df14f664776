package flow

import (
	"errors"
	"fmt"
	"log/slog"
	"math"

	"lipformer/internal/jsonfloat"
	"lipformer/model"
	"lipformer/spec"
)

// Kinds of input of an Experiment.
const (
	InputData        = "data"        // the hidden states of token windows, inverted as a stack
	InputAdversarial = "adversarial" // Adversarial at every sub-block's input
	InputRandom      = "random"      // Random at every sub-block's input
)

// ExperimentConfig says what an Experiment inverts and how.
type ExperimentConfig struct {
	Batch      int       // sequences of the model's context per inversion
	Spreads    []float64 // of the adversarial and random inputs
	Tol        float64   // Options.Tol
	MaxIter    int       // Options.MaxIter
	MaxError   float64   // a converged inversion with a larger reconstruction error found another preimage: a failure
	PowerIters int       // power-iteration steps on the model before compiling the stack
	Seed       uint64    // of the adversarial and random inputs
}

// validate returns an error naming a bad setting.
func (c ExperimentConfig) validate() error {
	switch {
	case c.Batch < 1:
		return fmt.Errorf("flow: batch %d, want >= 1", c.Batch)
	case !(c.MaxError > 0) || math.IsInf(c.MaxError, 1):
		return fmt.Errorf("flow: reconstruction error bound %v, want finite and > 0", c.MaxError)
	case c.PowerIters < 0:
		return fmt.Errorf("flow: %d power iterations, want >= 0", c.PowerIters)
	}
	for _, s := range c.Spreads {
		if !(s > 0) || math.IsInf(s, 1) {
			return fmt.Errorf("flow: spread %v, want finite and > 0", s)
		}
	}
	return Options{Tol: c.Tol, MaxIter: c.MaxIter}.validate()
}

// Experiment is the inversion experiment of cmd/invert on a model of an invertible
// architecture: its stack compiled in float64, and the token windows to invert.
type Experiment struct {
	Model *model.Model // the float64 copy that Stack computes with
	Stack *Stack
	// Scored is the certificate of the model as it was given, with its stored power
	// iteration vectors: the function that evaluation scores. Inverted is that of the
	// function Stack inverts, after cfg.PowerIters more iterations; the same function,
	// and an equal certificate, when cfg.PowerIters is 0.
	Scored, Inverted *model.Certificate
	cfg              ExperimentConfig
	ids              []int // (B*T) token ids of the data windows
	opt              Options
}

// NewExperiment converts m to float64, certifies it (Scored), runs cfg.PowerIters power
// iterations on the copy, certifies it again (Inverted) and compiles its stack for batches of cfg.Batch sequences; ids (B*T) are the token windows
// that Run inverts as data. Failures to converge are logged to log (nil for nowhere). The
// caller closes the experiment.
func NewExperiment(m *model.Model, ids []int, cfg ExperimentConfig, log *slog.Logger) (*Experiment, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if len(ids) != cfg.Batch*m.Cfg.Context {
		return nil, fmt.Errorf("flow: %d token ids, want %d sequences of %d", len(ids), cfg.Batch, m.Cfg.Context)
	}
	m, err := m.WithDtype(spec.Float64)
	if err != nil {
		return nil, err
	}
	scored, err := m.Certificate()
	if err != nil {
		return nil, err
	}
	inverted := scored
	if cfg.PowerIters > 0 {
		m.PowerIterate(cfg.PowerIters)
		if inverted, err = m.Certificate(); err != nil {
			return nil, err
		}
	}
	st, err := NewStack(m, cfg.Batch)
	if err != nil {
		return nil, err
	}
	return &Experiment{Model: m, Stack: st, Scored: scored, Inverted: inverted, cfg: cfg, ids: ids, opt: Options{Tol: cfg.Tol, MaxIter: cfg.MaxIter, Log: log}}, nil
}

// Close releases the stack's programs.
func (e *Experiment) Close() { e.Stack.Close() }

// Record is the outcome of one sub-block's inversion on one input: one JSON object of
// cmd/invert's output.
type Record struct {
	Arch       string          `json:"arch"`
	Block      string          `json:"block"`
	Norm       string          `json:"norm"`
	Input      string          `json:"input"`            // InputData, InputAdversarial or InputRandom
	Spread     float64         `json:"spread,omitempty"` // of adversarial and random inputs
	Stack      bool            `json:"stack"`            // inverted as part of the whole stack (data)
	InputNorm  jsonfloat.Float `json:"input_norm"`       // of the true input, in the norm
	Lipschitz  jsonfloat.Float `json:"lipschitz"`        // g's constant in the norm
	Certified  bool            `json:"certified"`        // whether it is a certified bound
	Converged  bool            `json:"converged"`
	Iterations int             `json:"iterations"`
	Step       jsonfloat.Float `json:"final_step"`
	Error      jsonfloat.Float `json:"reconstruction_error"`
	Rate       jsonfloat.Float `json:"contraction_rate"` // largest ratio of successive steps; NaN if unmeasured
	Failed     bool            `json:"failed"`           // not converged, or reconstruction error above MaxError
	Errors     []float64       `json:"-"`                // reconstruction error per iteration, for a plot
}

// Run inverts the data windows as a stack, then every sub-block on the adversarial and
// random inputs at every spread, and returns a record per inversion in that order. An
// inversion that does not converge is a failed record, not an error. progress, unless
// nil, is called after each inversion with the inversions done and their total (the
// stack's count as one each).
func (e *Experiment) Run(progress func(done, total int)) ([]Record, error) {
	total, done := len(e.Stack.Subs)*(1+2*len(e.cfg.Spreads)), 0
	report := func(n int) {
		if done += n; progress != nil {
			progress(done, total)
		}
	}
	x, err := Embed(e.Model, e.ids)
	if err != nil {
		return nil, err
	}
	states, err := e.Stack.Forward(x)
	if err != nil {
		return nil, err
	}
	_, results, err := e.Stack.Invert(states[len(states)-1], states, e.opt)
	if err != nil && !errors.Is(err, ErrNotConverged) {
		return nil, err
	}
	var records []Record
	for i, r := range results {
		records = append(records, e.record(r, states[i], InputData, 0, true))
	}
	report(len(results))
	b, t, d := e.cfg.Batch, e.Model.Cfg.Context, e.Model.Cfg.Width
	for _, kind := range []string{InputAdversarial, InputRandom} {
		for _, spread := range e.cfg.Spreads {
			x := Random(b, t, d, spread, e.cfg.Seed)
			if kind == InputAdversarial {
				x = Adversarial(b, t, d, spread, e.cfg.Seed)
			}
			for _, s := range e.Stack.Subs {
				y, err := s.Forward(x)
				if err != nil {
					return nil, err
				}
				_, res, err := s.Invert(y, x, e.opt)
				if err != nil && !errors.Is(err, ErrNotConverged) {
					return nil, err
				}
				records = append(records, e.record(res, x, kind, spread, false))
				report(1)
			}
		}
	}
	return records, nil
}

// record turns a result for the true input x into a record.
func (e *Experiment) record(r Result, x []float64, kind string, spread float64, stack bool) Record {
	return Record{Arch: e.Model.Cfg.Arch.String(), Block: r.Block, Norm: r.Norm.String(), Input: kind, Spread: spread, Stack: stack,
		InputNorm: jsonfloat.Float(r.Norm.Of(x, e.Model.Cfg.Width)),
		Lipschitz: jsonfloat.Float(r.Lipschitz), Certified: r.Certified, Converged: r.Converged, Iterations: r.Iterations,
		Step: jsonfloat.Float(r.Step), Error: jsonfloat.Float(r.Error), Rate: jsonfloat.Float(r.Rate),
		Failed: !r.Converged || !(r.Error <= e.cfg.MaxError), Errors: r.Errors}
}
