package train

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"lipformer/dist"
	"lipformer/model"
	"lipformer/ops"
)

// Stepper is one optimisation step of a model, the code path of every training run: power
// iteration of the spectral normalisations, dropout masks, forward and backward pass of a
// training program, global-norm clipping and an AdamW update. The trainer and cmd/bench
// both use it. Write a batch into Prog.Inputs and Prog.Targets, then call Step (or
// Gradients and Update, to look at the loss and norm in between). T must be the model's
// element type. A Stepper is not safe for concurrent use.
type Stepper[T Float] struct {
	Model *model.Model
	Prog  *model.Program // the training program, of batches of Prog.Graph.Batch sequences
	Adam  *Adam[T]       // over the program's parameters, in the order of Prog.Params
	Cfg   StepConfig
	// Comm, when it has more than one rank, makes the step one of data-parallel replicas:
	// Gradients returns the mean loss and the clipped mean gradient over them (allReduce).
	Comm  dist.Comm
	grads [][]T     // the Grad slice of each parameter, (size of the parameter) each
	flat  []T       // all gradients end to end, for the all-reduce
	dots  []float64 // (len(grads)) the gradients' sums of squares, clipGlobalNorm's scratch
}

// StepConfig is how a Stepper steps, besides the passes: Options.StepConfig is a run's.
type StepConfig struct {
	Adam AdamConfig
	Clip float64 // global gradient-norm clip; 0 disables
	Seed uint64  // seeds the dropout masks of each step
	// PowerIters is the number of power-iteration steps that refresh the spectral
	// normalisations and token-norm bounds before each step; 0 means 1.
	PowerIters int
}

// NewStepper compiles a training program of m for batches of the given size and makes an
// AdamW optimizer with zero moments over its parameters. It fails when T is not the
// element type of m's parameters.
func NewStepper[T Float](m *model.Model, batch int, cfg StepConfig) (*Stepper[T], error) {
	if !(cfg.Clip >= 0) || math.IsInf(cfg.Clip, 1) {
		return nil, fmt.Errorf("stepper: clip %v, want a finite number >= 0", cfg.Clip)
	}
	if cfg.PowerIters < 0 {
		return nil, fmt.Errorf("stepper: %d power iterations per step, want >= 0 (0: 1)", cfg.PowerIters)
	}
	prog, err := m.NewProgram(model.Train, batch)
	if err != nil {
		return nil, err
	}
	s := &Stepper[T]{Model: m, Prog: prog, Cfg: cfg}
	params := make([]Param[T], 0, len(prog.Params()))
	matrices := m.Matrices()
	for _, p := range prog.Params() {
		v, ok := p.Value.Data().([]T)
		if !ok {
			prog.Close()
			var zero T
			return nil, fmt.Errorf("stepper: parameter %s holds %T, not []%T (model dtype %s)", p.Name, p.Value.Data(), zero, m.Cfg.Dtype)
		}
		g := make([]T, len(v))
		tp := Param[T]{Name: p.Name, Value: v, Grad: g, Decay: p.Decay, LRScale: p.LRScale}
		if slices.Contains(matrices, p) {
			tp.Rows, tp.Cols = p.Value.Shape()[0], p.Value.Shape()[1]
		}
		params = append(params, tp)
		s.grads = append(s.grads, g)
	}
	s.dots = make([]float64, len(s.grads))
	if s.Adam, err = NewAdam(params, cfg.Adam); err != nil {
		prog.Close()
		return nil, err
	}
	return s, nil
}

// Gradients runs the forward and backward pass of step number step on the batch in
// Prog.Inputs and Prog.Targets and clips the gradient. It returns the loss and the
// gradient norm before clipping. Cfg.PowerIters steps of power iteration refresh the
// spectral normalisations first (held fixed within the step); the dropout masks are those of
// (Cfg.Seed, step). With a Comm of several ranks every rank must call it for the same step.
func (s *Stepper[T]) Gradients(step int) (loss, norm float64, err error) {
	s.Model.PowerIterate(max(1, s.Cfg.PowerIters))
	s.Prog.Resample(s.Cfg.Seed, step)
	if err := s.Prog.Run(); err != nil {
		if errors.Is(err, ops.ErrNonFinite) { // overflowed weights: a divergence
			return math.NaN(), math.NaN(), fmt.Errorf("step %d: %w: %w", step, ErrNonFinite, err)
		}
		return 0, 0, fmt.Errorf("step %d: %w", step, err)
	}
	for i, g := range s.grads {
		d, err := s.Prog.Grad(i)
		if err != nil {
			return 0, 0, fmt.Errorf("step %d: %w", step, err)
		}
		src, ok := d.Data().([]T)
		if !ok || len(src) != len(g) {
			return 0, 0, fmt.Errorf("step %d: gradient of %s is %T of %d elements, want %d", step, s.Prog.Params()[i].Name, d.Data(), d.Shape().TotalSize(), len(g))
		}
		copy(g, src)
	}
	if loss, err = s.Prog.Loss(); err != nil {
		return 0, 0, fmt.Errorf("step %d: %w", step, err)
	}
	if loss, err = s.allReduce(loss); err != nil {
		return 0, 0, fmt.Errorf("step %d: %w", step, err)
	}
	return loss, clipGlobalNorm(s.grads, s.Cfg.Clip, s.dots), nil
}

// Update applies the optimizer to the gradients of the last Gradients call with learning
// rate lr.
func (s *Stepper[T]) Update(lr float64) error { return s.Adam.Step(lr) }

// Step is Gradients and then, when the loss and the norm are finite, Update with learning
// rate lr. On a non-finite loss or norm it leaves the weights alone and returns the loss
// and norm with an error wrapping ErrNonFinite.
func (s *Stepper[T]) Step(step int, lr float64) (loss, norm float64, err error) {
	if loss, norm, err = s.Gradients(step); err != nil {
		return loss, norm, err
	}
	if !finite(loss) || !finite(norm) {
		return loss, norm, fmt.Errorf("step %d: loss %v, gradient norm %v: %w", step, loss, norm, ErrNonFinite)
	}
	if err := s.Update(lr); err != nil {
		return loss, norm, fmt.Errorf("step %d: update: %w", step, err)
	}
	return loss, norm, nil
}

// Close releases the training program.
func (s *Stepper[T]) Close() error { return s.Prog.Close() }

// finite reports whether x is neither NaN nor infinite.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
