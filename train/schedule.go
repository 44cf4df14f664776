package train

import (
	"fmt"
	"math"
	"strings"
)

// Schedule gives the learning rate of each step, counted from 0. The
// schedules of this package treat a negative step as step 0.
type Schedule interface {
	LR(step int) float64
}

// ScheduleConfig holds the settings of every schedule; each schedule uses
// the ones its constructor documents.
type ScheduleConfig struct {
	LR         float64 // peak learning rate, reached at the end of warmup
	MinLR      float64 // cosine: learning rate from DecayIters on
	Warmup     int     // steps of linear warmup; 0 for none
	DecayIters int     // cosine: step at which the decay reaches MinLR
}

// ScheduleNames returns the names NewSchedule accepts, for help texts.
func ScheduleNames() []string { return []string{"constant", "cosine", "invsqrt"} }

// NewSchedule returns the schedule called name ("constant", "cosine" or
// "invsqrt") with the settings in cfg, or an error naming the valid names or
// the invalid setting.
func NewSchedule(name string, cfg ScheduleConfig) (Schedule, error) {
	switch name {
	case "constant":
		return NewConstant(cfg.LR, cfg.Warmup)
	case "cosine":
		return NewCosine(cfg.LR, cfg.MinLR, cfg.Warmup, cfg.DecayIters)
	case "invsqrt":
		return NewInvSqrt(cfg.LR, cfg.Warmup)
	}
	return nil, fmt.Errorf("unknown learning-rate schedule %q (valid: %s)", name, strings.Join(ScheduleNames(), ", "))
}

// warmup is nanoGPT's linear warmup: lr*(step+1)/(steps+1) for step < steps.
type warmup struct {
	lr    float64
	steps int
}

// in reports whether step (>= 0) is in the warmup and, if so, its learning
// rate.
func (w warmup) in(step int) (float64, bool) {
	if step >= w.steps {
		return 0, false
	}
	return w.lr * float64(step+1) / float64(w.steps+1), true
}

// checkLR reports whether lr is a usable peak learning rate and warmup a
// usable warmup length.
func checkLR(lr float64, warmupSteps int) error {
	if !(lr > 0) || math.IsInf(lr, 1) {
		return fmt.Errorf("learning rate %v is not a finite positive number", lr)
	}
	if warmupSteps < 0 {
		return fmt.Errorf("warmup %d is negative", warmupSteps)
	}
	return nil
}

// constant is a fixed learning rate after warmup.
type constant struct{ warmup }

// NewConstant returns lr at every step after warmupSteps of linear warmup
// (none when warmupSteps is 0).
func NewConstant(lr float64, warmupSteps int) (Schedule, error) {
	if err := checkLR(lr, warmupSteps); err != nil {
		return nil, err
	}
	return constant{warmup{lr, warmupSteps}}, nil
}

// LR returns the learning rate of step.
func (c constant) LR(step int) float64 {
	step = max(step, 0)
	if lr, ok := c.in(step); ok {
		return lr
	}
	return c.lr
}

// cosine is nanoGPT's get_lr.
type cosine struct {
	warmup
	minLR      float64
	decayIters int
}

// NewCosine returns nanoGPT's schedule (get_lr): lr*(step+1)/(warmup+1)
// while step < warmup, then a cosine decay from lr at step warmup to minLR at
// step decayIters, then minLR. It needs 0 <= minLR <= lr and
// decayIters > warmup.
func NewCosine(lr, minLR float64, warmupSteps, decayIters int) (Schedule, error) {
	if err := checkLR(lr, warmupSteps); err != nil {
		return nil, err
	}
	if !(minLR >= 0 && minLR <= lr) {
		return nil, fmt.Errorf("minimum learning rate %v is not in [0, %v]", minLR, lr)
	}
	if decayIters <= warmupSteps {
		return nil, fmt.Errorf("cosine decay must end (at %d) after warmup (%d)", decayIters, warmupSteps)
	}
	return cosine{warmup{lr, warmupSteps}, minLR, decayIters}, nil
}

// LR returns the learning rate of step.
func (c cosine) LR(step int) float64 {
	step = max(step, 0)
	if lr, ok := c.in(step); ok {
		return lr
	}
	if step > c.decayIters {
		return c.minLR
	}
	ratio := float64(step-c.steps) / float64(c.decayIters-c.steps)
	coeff := 0.5 * (1 + math.Cos(math.Pi*ratio))
	return c.minLR + coeff*(c.lr-c.minLR)
}

// invSqrt is linear warmup followed by inverse-square-root decay.
type invSqrt struct{ warmup }

// NewInvSqrt returns lr*(step+1)/(warmup+1) while step < warmup, then
// lr*sqrt(w/step) with w = max(warmup, 1): lr at the end of warmup, halving
// each time the step count quadruples.
func NewInvSqrt(lr float64, warmupSteps int) (Schedule, error) {
	if err := checkLR(lr, warmupSteps); err != nil {
		return nil, err
	}
	return invSqrt{warmup{lr, warmupSteps}}, nil
}

// LR returns the learning rate of step.
func (s invSqrt) LR(step int) float64 {
	step = max(step, 0)
	if lr, ok := s.in(step); ok {
		return lr
	}
	w := max(s.steps, 1)
	return s.lr * math.Sqrt(float64(w)/float64(max(step, w)))
}
