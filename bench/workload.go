package bench

import (
	"fmt"
	"math/rand/v2"

	"lipformer/model"
	"lipformer/spec"
	"lipformer/train"
)

// SampleCycles is the number of shift-window cycles of one run of the sample mode.
const SampleCycles = 4

// SampleWindowNone is the Settings.SampleWindow that times generation within the context.
const SampleWindowNone = "none"

// Workload is one mode of a job on its model, ready to run: what Measure times and
// the benchmarks of package model loop over.
type Workload struct {
	Run       func(i int) error       // one run; i counts the runs from 0 (the training step)
	Loss      func() (float64, error) // the loss of the last run (train, eval), or nil (sample)
	Batch     int                     // sequences per run
	Positions int                     // token positions computed per run
	Generated int                     // sample: tokens generated per run
	FLOPs     float64                 // matrix-product FLOPs per run (model.CountFLOPs, CountFillFLOPs)
	Params    int                     // scalar parameters of the model
	close     func() error
}

// Close releases the workload's program.
func (w *Workload) Close() error { return w.close() }

// Workload builds the job's model (a fresh one initialised from the seed, or the
// checkpoint's) and the program of the mode on it:
//   - train: training steps (train.Stepper.Step, the trainer's code path) on the job's
//     batch at the options' constant peak learning rate, with their Adam settings, clip and
//     power iterations (Job.stepOptions);
//   - eval: forward-only Eval programs on the job's batch;
//   - sample: model.GenerateBatch of SampleBatch sequences in step, with the decoder's
//     key/value cache, at temperature 1 over the whole vocabulary. With the shift window
//     (the steady state of cmd/sample) a run starts from prompts of T/2+1 bytes, whose
//     prefill is the one a shift makes, and generates SampleCycles * (T - T/2) tokens per
//     sequence (2T for even T): SampleCycles whole cycles, each a prefill of T/2+1
//     positions and T - T/2 - 1 single steps, so that the time per token includes the
//     amortised re-prefills. With SampleWindowNone a run generates T tokens per sequence
//     from a 1-byte prompt, within the context: one position per token, no re-prefill.
func (j Job) Workload(mode string) (*Workload, error) {
	m, err := j.newModel()
	if err != nil {
		return nil, err
	}
	var w *Workload
	switch mode {
	case ModeTrain:
		if j.Cfg.Dtype == spec.Float64 {
			w, err = trainWorkload[float64](m, j)
		} else {
			w, err = trainWorkload[float32](m, j)
		}
	case ModeEval:
		w, err = evalWorkload(m, j)
	case ModeSample:
		w, err = sampleWorkload(m, j)
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		return nil, err
	}
	w.Params = m.NumParams()
	if mode != ModeSample {
		fl, err := model.CountFLOPs(j.Cfg, j.Preset.Batch)
		if err != nil {
			w.Close()
			return nil, err
		}
		w.FLOPs = fl.Forward
		if mode == ModeTrain {
			w.FLOPs = fl.Train
		}
	}
	return w, nil
}

// trainWorkload is the train mode's workload of m.
func trainWorkload[T train.Float](m *model.Model, j Job) (*Workload, error) {
	st, lr, err := jobStepper[T](m, j)
	if err != nil {
		return nil, err
	}
	var loss float64
	return &Workload{
		Run: func(i int) error {
			var err error
			loss, _, err = st.Step(i, lr)
			return err
		},
		Loss:  func() (float64, error) { return loss, nil },
		Batch: j.Preset.Batch, Positions: j.Preset.Batch * j.Cfg.Context,
		close: st.Close,
	}, nil
}

// jobStepper makes a training stepper of m with the job's training settings
// (Job.stepOptions), loaded with the job's batch, and returns their constant peak
// learning rate. The caller closes it.
func jobStepper[T train.Float](m *model.Model, j Job) (*train.Stepper[T], float64, error) {
	o := j.stepOptions()
	st, err := train.NewStepper[T](m, j.Preset.Batch, o.StepConfig())
	if err != nil {
		return nil, 0, err
	}
	copy(st.Prog.Inputs, j.Inputs)
	copy(st.Prog.Targets, j.Targets)
	return st, o.LR, nil
}

// evalWorkload is the eval mode's workload of m.
func evalWorkload(m *model.Model, j Job) (*Workload, error) {
	p, err := m.NewProgram(model.Eval, j.Preset.Batch)
	if err != nil {
		return nil, err
	}
	copy(p.Inputs, j.Inputs)
	copy(p.Targets, j.Targets)
	return &Workload{Run: func(int) error { return p.Run() }, Loss: p.Loss,
		Batch: j.Preset.Batch, Positions: j.Preset.Batch * j.Cfg.Context, close: p.Close}, nil
}

// sampleWorkload is the sample mode's workload of m.
func sampleWorkload(m *model.Model, j Job) (*Workload, error) {
	b := j.Set.SampleBatch
	d, err := m.NewBatchDecoder(b)
	if err != nil {
		return nil, err
	}
	t := j.Cfg.Context
	prompt, cycles := t/2+1, SampleCycles
	if j.Set.SampleWindow == SampleWindowNone {
		prompt, cycles = 1, 1
	}
	fill, err := model.CountFillFLOPs(j.Cfg, prompt)
	if err != nil {
		return nil, err
	}
	perSeq := cycles * (t - prompt + 1)
	ids, _ := model.RandomBatch(j.Set.Seed, b, t, j.Cfg.Vocab)
	prompts := make([][]int, b)
	for i := range prompts {
		prompts[i] = ids[i*t : i*t+prompt]
	}
	s := model.Sampling{Temperature: 1, Window: model.Shift}
	rng := rand.New(rand.NewPCG(j.Set.Seed, 0x73616d706c65)) // "sample"
	return &Workload{
		Run: func(int) error {
			_, err := model.GenerateBatch(d, prompts, perSeq, s, rng)
			return err
		},
		Batch: b, Positions: b * cycles * t, Generated: b * perSeq, FLOPs: float64(b*cycles) * fill,
		close: func() error { return nil },
	}, nil
}
