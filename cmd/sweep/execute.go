package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"lipformer/data"
	"lipformer/model"
	"lipformer/train"
)

// sweeper holds what the runs of a sweep share.
type sweeper struct {
	out      string // the sweep's output directory; run s goes to out/s.name()
	corpus   *data.Corpus
	log      *slog.Logger
	progress io.Writer // where progress bars go, or nil
}

// runOne brings the run s to its end: it skips a finished run, resumes an interrupted one
// from its checkpoint, and trains a new one (or one that crashed before its first
// checkpoint, from scratch). It returns the run's summary and what Train returned: for a
// run stopped at a non-finite loss, the summary and an error wrapping train.ErrNonFinite;
// for an interrupted one, the summary with Interrupted set.
func (sw *sweeper) runOne(ctx context.Context, s spec) (*train.Summary, error) {
	dir := filepath.Join(sw.out, s.name())
	st, err := inspect(dir)
	if err != nil {
		return nil, err
	}
	act, err := st.action()
	if err != nil {
		return nil, err
	}
	s.cfg.Vocab = sw.corpus.Vocab.Size()
	if err := st.checkSummary(s); err != nil {
		return nil, err
	}
	log := sw.log.With("run", s.name())
	r := &train.Run{Corpus: sw.corpus, Opt: s.opt, Out: dir, Log: log, Progress: sw.progress}
	switch act {
	case actSkip:
		log.Info("finished already: skipped")
		return st.sum, nil
	case actResume:
		ckPath := filepath.Join(dir, train.LatestFile)
		if r.Model, r.Resume, err = model.Load(ckPath); err != nil {
			return nil, err
		}
		if r.Opt, err = train.TrainOptions(r.Resume); err != nil {
			return nil, fmt.Errorf("%s: %w", ckPath, err)
		}
		if err := sameSettings(s, r.Model.Cfg, r.Opt, ckPath); err != nil {
			return nil, err
		}
		step, err := r.Resume.MetaInt(train.MetaStep)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ckPath, err)
		}
		log.Info("resuming", "step", step)
	case actRestart:
		log.Info("restarting: the run stopped before its first checkpoint")
		if err := os.Remove(filepath.Join(dir, train.MetricsFile)); err != nil {
			return nil, err
		}
		fallthrough
	default:
		if r.Model, err = model.New(s.cfg, s.opt.Seed); err != nil {
			return nil, err
		}
		log.Info("training", "params", r.Model.NumParams())
	}
	return r.Train(ctx)
}
