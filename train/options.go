package train

import (
	"fmt"
	"strings"
)

// Options configures a training run. They are saved in every checkpoint, so a resumed
// run continues with the same settings without flags.
type Options struct {
	Data        string  `json:"data"`         // corpus spec, as data.Load takes it
	Split       string  `json:"split"`        // split fractions of a file corpus
	Steps       int     `json:"steps"`        // optimizer steps in all
	Batch       int     `json:"batch"`        // sequences per step
	LR          float64 `json:"lr"`           // peak learning rate
	MinLR       float64 `json:"min_lr"`       // floor of the cosine schedule
	Warmup      int     `json:"warmup"`       // linear warm-up steps
	Schedule    string  `json:"schedule"`     // constant, cosine or invsqrt
	Beta1       float64 `json:"beta1"`        // Adam
	Beta2       float64 `json:"beta2"`        // Adam
	WeightDecay float64 `json:"weight_decay"` // decoupled, on matrices only
	// Muon, when positive, trains the blocks' weight matrices with Muon at Muon times the
	// learning rate (AdamConfig.Muon); 0, as in every run stored before the setting, means
	// AdamW for all parameters.
	Muon      float64 `json:"muon,omitempty"`
	Clip      float64 `json:"clip"`       // global gradient-norm clip; 0 disables
	EvalEvery int     `json:"eval_every"` // steps between validations and checkpoints
	EvalBytes int     `json:"eval_bytes"` // bytes of the validation split scored at each validation; 0 = all
	Seed      uint64  `json:"seed"`       // initialisation, batches and dropout
	// LogLipschitz writes the attention layers' bounds, scales and certified constants
	// (model.AttentionReport) to the metrics log every LogLipschitz steps; 0 never.
	LogLipschitz int `json:"log_lipschitz,omitempty"`
	// PowerIters is the number of power-iteration steps that refresh the spectral
	// normalisations and token-norm bounds before each training step (docs/runs.md). 0,
	// what the options of a run stored before the setting hold, means 1, which that run
	// took, so that it resumes exactly.
	PowerIters int `json:"power_iters,omitempty"`
	// FinalPowerIters is the number of power-iteration steps run on the final weights
	// before the last validation, the final scores and the last checkpoint, so that the
	// estimates the spectral normalisations divide by have caught up with the weights and
	// the function scored, certified and inverted is the same (docs/runs.md). 0, what the
	// options of a run stored before the setting hold, means none.
	FinalPowerIters int `json:"final_power_iters,omitempty"`
}

// DefaultOptions are nanoGPT's CPU settings for Tiny Shakespeare, scaled to a quick run,
// with 8 power iterations per step and 500 on the final weights (docs/runs.md, "Power
// iterations per step").
func DefaultOptions() Options {
	return Options{Steps: 2000, Batch: 12, LR: 1e-3, MinLR: 1e-4, Warmup: 100, Schedule: "cosine",
		Beta1: 0.9, Beta2: 0.99, WeightDecay: 0.1, Clip: 1, EvalEvery: 250, EvalBytes: 100_000, Seed: 1, PowerIters: 8,
		FinalPowerIters: 500}
}

// Validate returns an error naming every option out of range.
func (o Options) Validate() error {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if o.Steps < 1 {
		bad("steps %d, want >= 1", o.Steps)
	}
	if o.LogLipschitz < 0 {
		bad("log-lipschitz %d, want >= 0", o.LogLipschitz)
	}
	if o.PowerIters < 0 {
		bad("power-iters %d, want >= 0 (0: 1)", o.PowerIters)
	}
	if o.FinalPowerIters < 0 {
		bad("final-power-iters %d, want >= 0 (0: none)", o.FinalPowerIters)
	}
	if o.Batch < 1 {
		bad("batch %d, want >= 1", o.Batch)
	}
	if !(o.LR > 0) || o.MinLR < 0 || o.MinLR > o.LR {
		bad("lr %g and min-lr %g, want 0 <= min-lr <= lr and lr > 0", o.LR, o.MinLR)
	}
	if o.Warmup < 0 {
		bad("warmup %d, want >= 0", o.Warmup)
	}
	if _, err := o.schedule(); err != nil {
		bad("%v", err)
	}
	if err := o.AdamConfig().Validate(); err != nil {
		bad("%v", err)
	}
	if o.Clip < 0 {
		bad("clip %g, want >= 0", o.Clip)
	}
	if o.EvalEvery < 1 {
		bad("eval-every %d, want >= 1", o.EvalEvery)
	}
	if o.EvalBytes < 0 {
		bad("eval-bytes %d, want >= 0", o.EvalBytes)
	}
	if len(errs) > 0 {
		return fmt.Errorf("training options: %s", strings.Join(errs, "; "))
	}
	return nil
}

// schedule builds the learning-rate schedule; cosine decays over all the steps.
func (o Options) schedule() (Schedule, error) {
	return NewSchedule(o.Schedule, ScheduleConfig{LR: o.LR, MinLR: o.MinLR, Warmup: o.Warmup, DecayIters: o.Steps})
}

// StepConfig is the training step of the options (Stepper), for a run of one process.
func (o Options) StepConfig() StepConfig {
	return StepConfig{Adam: o.AdamConfig(), Clip: o.Clip, Seed: o.Seed, PowerIters: o.PowerIters}
}

// AdamConfig is the optimizer configuration of the options (eps 1e-8).
func (o Options) AdamConfig() AdamConfig {
	return AdamConfig{Beta1: o.Beta1, Beta2: o.Beta2, Eps: 1e-8, WeightDecay: o.WeightDecay, Muon: o.Muon}
}
