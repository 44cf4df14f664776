package sweep

import (
	"context"
	"io"
	"log/slog"

	"lipformer/data"
	"lipformer/model"
	"lipformer/train"
)

// Runner holds what the runs of a sweep share.
type Runner struct {
	Out      string // the sweep's output directory; run s goes to s.Dir(Out)
	Corpus   *data.Corpus
	Log      *slog.Logger
	Progress io.Writer // where progress bars go, or nil
}

// Run brings the run s to its end (train.RunDir.Action): it skips a finished run,
// resumes an interrupted one from its checkpoint, and trains a new one (or one that
// crashed before its first checkpoint, from scratch). It returns the run's summary and
// what Train returned: for a run stopped at a non-finite loss, the summary and an error
// wrapping train.ErrNonFinite; for an interrupted one, the summary with Interrupted set.
func (sw *Runner) Run(ctx context.Context, s Spec) (*train.Summary, error) {
	d, err := train.OpenRun(s.Dir(sw.Out))
	if err != nil {
		return nil, err
	}
	act, err := d.Action()
	if err != nil {
		return nil, err
	}
	s.Cfg.Vocab = sw.Corpus.Vocab.Size()
	if err := CheckSummary(d, s); err != nil {
		return nil, err
	}
	log := sw.Log.With("run", s.Name())
	r := &train.Run{Opt: s.Opt, Out: d.Dir()}
	switch act {
	case train.ActSkip:
		log.Info("finished already: skipped")
		return d.Summary(), nil
	case train.ActResume:
		if err := d.SummaryError(); err != nil {
			log.Warn("the summary file is unreadable: resuming from the checkpoint and the metrics log, and writing a new summary at the end", "error", err)
		}
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
		if r.Model, err = model.New(s.Cfg, s.Opt.Seed); err != nil {
			return nil, err
		}
		log.Info("training", "params", r.Model.NumParams())
	}
	r.Corpus, r.Log, r.Progress = sw.Corpus, log, sw.Progress
	return r.Train(ctx)
}
