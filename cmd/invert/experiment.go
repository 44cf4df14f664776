package main

import (
	"context"
	"fmt"
	"log/slog"

	"lipformer/data"
	"lipformer/flow"
	"lipformer/internal/cli"
	"lipformer/model"
	"lipformer/train"
)

// experiment is a loaded checkpoint with its corpus, and the flow experiment on it.
type experiment struct {
	cfg    *config
	path   string
	step   int
	model  *model.Model // float64, as the flow experiment computes
	flow   *flow.Experiment
	corpus string
}

// newExperiment loads the checkpoint and its corpus and sets up the flow experiment on
// them (a float64 copy of the model after the power iterations, compiled as a stack).
func newExperiment(ctx context.Context, c *config, log *slog.Logger) (*experiment, error) {
	path, err := cli.CheckpointPath(c.ckpt)
	if err != nil {
		return nil, err
	}
	m, ck, err := model.Load(path)
	if err != nil {
		return nil, err
	}
	if !m.Cfg.Arch.Invertible() {
		return nil, fmt.Errorf("-ckpt %s: architecture %s is not invertible (want invertible-l2 or invertible-dp)", path, m.Cfg.Arch)
	}
	ids, corpus, err := dataWindows(ctx, c, path, ck, m.Cfg.Context, log)
	if err != nil {
		return nil, err
	}
	fe, err := flow.NewExperiment(m, ids, flow.ExperimentConfig{Batch: c.batch, Spreads: c.spreads, Tol: c.tol, MaxIter: c.maxIter,
		MaxError: c.maxError, PowerIters: c.powerIters, Seed: c.seed}, log)
	if err != nil {
		return nil, err
	}
	step, _ := ck.MetaInt(train.MetaStep)
	return &experiment{cfg: c, path: path, step: step, model: fe.Model, flow: fe, corpus: corpus}, nil
}

// dataWindows loads the corpus of the checkpoint ck read from path (or -data) and returns
// the token ids of the first B evaluation windows of the split, and the corpus's name.
func dataWindows(ctx context.Context, c *config, path string, ck *model.Checkpoint, context int, log *slog.Logger) ([]int, string, error) {
	corpus, err := cli.SavedCorpus(ctx, c.data, ck, path, c.dataDir, log)
	if err != nil {
		return nil, "", err
	}
	text := corpus.Valid
	if c.split == "test" {
		text = corpus.Test
	}
	tokens, err := corpus.Vocab.EncodeCompact(text)
	if err != nil {
		return nil, "", fmt.Errorf("%s split: %w", c.split, err)
	}
	w, err := data.NewEvalWindows(tokens, context, c.batch)
	if err != nil {
		return nil, "", fmt.Errorf("%s split: %w", c.split, err)
	}
	ids, targets := make([]int, c.batch*context), make([]int, c.batch*context)
	if _, err := w.Batch(0, ids, targets); err != nil {
		return nil, "", err
	}
	return ids, corpus.Name, nil
}
