package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"lipformer/bench"
	"lipformer/data"
	"lipformer/internal/cli"
	"lipformer/model"
	"lipformer/train"
)

// checkpointJobs makes the jobs of the saved models of -ckpt (bench.CheckpointJob), each
// named by its run directory (a file's directory), with "#2", "#3" ... after a name
// already taken, on the batch its run would have drawn after its last step, from the
// corpus it was trained on or -data.
func checkpointJobs(ctx context.Context, o options, log *slog.Logger) ([]bench.Job, error) {
	var jobs []bench.Job
	seen := map[string]int{}
	for _, arg := range o.ckpts {
		path, err := cli.CheckpointPath(strings.TrimSpace(arg))
		if err != nil {
			return nil, err
		}
		m, ck, err := model.Load(path)
		if err != nil {
			return nil, err
		}
		opt, err := train.TrainOptions(ck)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		in, tg, err := nextBatch(ctx, o, path, m.Cfg, opt, ck, log)
		if err != nil {
			return nil, err
		}
		name := filepath.Base(filepath.Dir(path))
		if seen[name]++; seen[name] > 1 {
			name = fmt.Sprintf("%s#%d", name, seen[name])
		}
		j, err := bench.CheckpointJob(name, path, m.Cfg, opt, in, tg, o.plan.Set)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// nextBatch is the training batch after the checkpoint's last step, as its run draws it
// (data.Sampler with the run's seed), from the corpus it was trained on, or -data.
func nextBatch(ctx context.Context, o options, path string, cfg model.Config, opt train.Options, ck *model.Checkpoint, log *slog.Logger) (in, tg []int, err error) {
	corpus, err := cli.SavedCorpus(ctx, o.data, ck, path, o.dataDir, log)
	if err != nil {
		return nil, nil, err
	}
	tokens, err := corpus.Vocab.EncodeCompact(corpus.Train)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: train split: %w", corpus.Name, err)
	}
	s, err := data.NewSampler(tokens, cfg.Context, opt.Batch, opt.Seed)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: train split: %w", corpus.Name, err)
	}
	step, err := ck.MetaInt(train.MetaStep)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	in, tg = make([]int, opt.Batch*cfg.Context), make([]int, opt.Batch*cfg.Context)
	return in, tg, s.Batch(step, in, tg)
}
