package bench

import (
	"fmt"

	"lipformer/model"
	"lipformer/ops"
	"lipformer/spec"
	"lipformer/train"
)

// CheckpointJob is the job of a saved model: its workloads start from the weights of the
// checkpoint file path, not from a fresh model, since a trained model's step can cost more
// than a fresh one's (docs/performance.md, "Trained models"). cfg and opt are the model
// config and training options the checkpoint stores; in and tg are the batch, opt.Batch
// rows of cfg.Context tokens (the caller draws it from the run's corpus). The train mode
// steps at opt's peak learning rate with its Adam settings, clip, Muon scale and power
// iterations, as the run trained; s says how the job is timed, and its architecture
// settings (Recipe, Muon, Mix, MLPBlocks, L2Bound) are set from cfg and opt, so that the
// measurements are named as a fresh job of the same model would be. name labels the
// measurements: their config.
func CheckpointJob(name, path string, cfg model.Config, opt train.Options, in, tg []int, s Settings) (Job, error) {
	if n := opt.Batch * cfg.Context; len(in) != n || len(tg) != n {
		return Job{}, fmt.Errorf("checkpoint %s: a batch of %d inputs and %d targets, want %d x %d = %d",
			path, len(in), len(tg), opt.Batch, cfg.Context, n)
	}
	if opt.Batch < 1 {
		return Job{}, fmt.Errorf("checkpoint %s: training batch %d, want >= 1", path, opt.Batch)
	}
	s.Recipe = (cfg.Arch == spec.ContractiveL2 || cfg.Arch == spec.InvertibleL2) && cfg.WithCertifiedRecipe() == cfg
	s.L2Bound, s.Muon, s.Mix, s.MLPBlocks = cfg.L2Bound, opt.Muon, cfg.Mix, cfg.MLPBlocks
	if s.Recipe {
		s.L2Bound = ops.BoundKim
		if cfg.MLPBlocks == spec.RecipeMLPBlocks {
			s.MLPBlocks = 0
		}
	}
	step := stepOptionsOf(opt)
	s.PowerIters = step.iterations()
	p := model.Preset{Name: name, Layers: cfg.Layers, Heads: cfg.Heads, Width: cfg.Width, Hidden: cfg.Hidden,
		Context: cfg.Context, Vocab: cfg.Vocab, Batch: opt.Batch, About: "checkpoint " + path}
	return Job{Preset: p, Cfg: cfg, Inputs: in, Targets: tg, Set: s, Checkpoint: path, step: &step}, nil
}

// newModel is the model the job's workloads start from: the checkpoint's, or a fresh one
// initialised from the seed.
func (j Job) newModel() (*model.Model, error) {
	if j.Checkpoint == "" {
		return model.New(j.Cfg, j.Set.Seed)
	}
	m, _, err := model.Load(j.Checkpoint)
	if err != nil {
		return nil, err
	}
	if m.Cfg != j.Cfg.Built() {
		return nil, fmt.Errorf("checkpoint %s: its model is %+v, not the job's %+v", j.Checkpoint, m.Cfg, j.Cfg.Built())
	}
	return m, nil
}
