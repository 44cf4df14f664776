package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"lipformer/model"
	"lipformer/spec"
)

// Plan is what a benchmark run measures: every preset with every architecture, or the
// saved models of Checkpoints, each in the modes, in Go and, with Torch, in PyTorch on the
// same weights and batch.
type Plan struct {
	Presets []model.Preset
	Archs   []spec.Arch
	// Checkpoints are jobs of saved models (CheckpointJob), measured in place of the
	// presets' architectures, as one group (Interleave alternates them); not with Torch.
	Checkpoints []Job
	Modes       []string // in measuring order (Modes)
	Set         Settings
	Torch       *Torch  // or nil: Go alone
	Dir         string  // with Torch: where the checkpoints given to PyTorch are written
	LossTol     float64 // with Torch: the largest accepted |Go - PyTorch| loss, in nats (LossCheck)
	// Interleave times each configuration's architectures in alternation
	// (MeasureInterleaved), not one after the other; not with Torch.
	Interleave bool
}

// Run measures the plan's jobs in order, each mode in Go (Job.Measure), then with Torch
// in PyTorch (Job.TorchRun), or with Interleave each configuration's jobs in alternation
// (MeasureInterleaved), and passes every measurement to emit as it is made, with its
// speedup over the training step of the same job and implementation. It returns the
// Go/PyTorch comparisons of every mode measured by both, and the loss checks.
func (p Plan) Run(ctx context.Context, emit func(Measurement) error) ([]Comparison, []LossCheck, error) {
	if p.Torch != nil && len(p.Checkpoints) > 0 {
		return nil, nil, errors.New("bench: saved models are timed in Go alone (no PyTorch)")
	}
	if p.Interleave {
		if p.Torch != nil {
			return nil, nil, errors.New("bench: interleaved runs are Go's alone (no PyTorch)")
		}
		return nil, nil, p.runInterleaved(ctx, emit)
	}
	var comps []Comparison
	var checks []LossCheck
	for _, group := range p.groups() {
		for _, j := range group {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			goRuns := map[string]Measurement{}
			for _, mode := range p.Modes {
				r, err := j.Measure(mode)
				if err != nil {
					return nil, nil, err
				}
				r.AddSpeedup(goRuns)
				goRuns[mode] = r
				if err := emit(r); err != nil {
					return nil, nil, err
				}
			}
			if p.Torch == nil {
				continue
			}
			lc, trs, err := j.TorchRun(ctx, *p.Torch, p.Dir, p.Modes, p.LossTol)
			if err != nil {
				return nil, nil, err
			}
			torchRuns := map[string]Measurement{}
			for _, r := range trs {
				r.AddSpeedup(torchRuns)
				torchRuns[r.Mode] = r
				if err := emit(r); err != nil {
					return nil, nil, err
				}
				if g, ok := goRuns[r.Mode]; ok {
					comps = append(comps, Compare(g, r))
				}
			}
			checks = append(checks, lc)
		}
	}
	return comps, checks, nil
}

// groups are the plan's jobs: the checkpoints' as one group, or each preset's
// architectures as a group.
func (p Plan) groups() [][]Job {
	if len(p.Checkpoints) > 0 {
		return [][]Job{p.Checkpoints}
	}
	var gs [][]Job
	for _, pr := range p.Presets {
		jobs := make([]Job, len(p.Archs))
		for k, arch := range p.Archs {
			jobs[k] = NewJob(pr, arch, p.Set)
		}
		gs = append(gs, jobs)
	}
	return gs
}

// runInterleaved measures each group's jobs in alternation, mode by mode
// (MeasureInterleaved), and passes every measurement to emit with its speedup over the
// training step of the same job.
func (p Plan) runInterleaved(ctx context.Context, emit func(Measurement) error) error {
	for _, jobs := range p.groups() {
		runs := make([]map[string]Measurement, len(jobs))
		for k := range jobs {
			runs[k] = map[string]Measurement{}
		}
		for _, mode := range p.Modes {
			if err := ctx.Err(); err != nil {
				return err
			}
			rs, err := MeasureInterleaved(jobs, mode)
			if err != nil {
				return err
			}
			for k, r := range rs {
				r.AddSpeedup(runs[k])
				runs[k][mode] = r
				if err := emit(r); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Soak soaks every job of the plan (every preset with every architecture, or every
// checkpoint) for the given training steps (Job.Soak) and passes each report to emit.
func (p Plan) Soak(ctx context.Context, steps int, emit func(SoakReport) error) error {
	for _, group := range p.groups() {
		for _, j := range group {
			r, err := j.Soak(ctx, steps)
			if err != nil {
				return fmt.Errorf("%s %s soak: %w", j.Preset.Name, j.ArchName(), err)
			}
			if err := emit(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckLosses returns an error naming every check whose Go and PyTorch losses differ by
// more than its tolerance, or nil.
func CheckLosses(checks []LossCheck) error {
	var bad []string
	for _, c := range checks {
		if !c.OK {
			bad = append(bad, fmt.Sprintf("%s %s: Go %.8f and %.8f, PyTorch %.8f and %.8f (|diff| %.2g and %.2g, tolerance %.2g)",
				c.Config, c.Arch, c.GoLoss, c.GoLoss1, c.TorchLoss, c.TorchLoss1, c.AbsDiff, c.AbsDiff1, c.Tol))
		}
	}
	if len(bad) > 0 {
		return errors.New("Go and PyTorch losses differ: " + strings.Join(bad, "; "))
	}
	return nil
}
