package main

import (
	"context"
	"io"
	"log/slog"
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

// runOne brings the run s to its end (train.RunDir.Action): it skips a finished run,
// resumes an interrupted one from its checkpoint, and trains a new one (or one that
// crashed before its first checkpoint, from scratch). It returns the run's summary and
// what Train returned: for a run stopped at a non-finite loss, the summary and an error
// wrapping train.ErrNonFinite; for an interrupted one, the summary with Interrupted set.
func (sw *sweeper) runOne(ctx context.Context, s spec) (*train.Summary, error) {
	d, err := train.OpenRun(filepath.Join(sw.out, s.name()))
	if err != nil {
		return nil, err
	}
	act, err := d.Action()
	if err != nil {
		return nil, err
	}
	s.cfg.Vocab = sw.corpus.Vocab.Size()
	if err := checkSummary(d, s); err != nil {
		return nil, err
	}
	log := sw.log.With("run", s.name())
	r := &train.Run{Opt: s.opt, Out: d.Dir()}
	switch act {
	case train.ActSkip:
		log.Info("finished already: skipped")
		return d.Summary(), nil
	case train.ActResume:
		var step int
		if r, step, err = d.Resume(); err != nil {
			return nil, err
		}
		if err := sameSettings(s, r.Model.Cfg, r.Opt, d.Path(train.LatestFile)); err != nil {
			return nil, err
		}
		log.Info("resuming", "step", step)
	case train.ActRestart:
		log.Info("restarting: the run stopped before its first checkpoint")
		r.Restart = true // Train removes its metrics log once it holds the lock
		fallthrough
	default:
		if r.Model, err = model.New(s.cfg, s.opt.Seed); err != nil {
			return nil, err
		}
		log.Info("training", "params", r.Model.NumParams())
	}
	r.Corpus, r.Log, r.Progress = sw.corpus, log, sw.progress
	return r.Train(ctx)
}
