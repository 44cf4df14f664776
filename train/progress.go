package train

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/schollz/progressbar/v3"
)

// DefaultProgressEvery is the time between progress lines when no progress bar is drawn.
const DefaultProgressEvery = 10 * time.Second

// EvalProgress is told, after each batch of an evaluation, how many of its total batches
// are done.
type EvalProgress func(done, total int)

// Reporter shows the progress of long work: a progress bar on Bar (a terminal), or when Bar
// is nil a line on Log every Every of work. Every <= 0 or a nil Log, without a bar, shows
// nothing.
type Reporter struct {
	Bar   io.Writer
	Log   *slog.Logger
	Every time.Duration
	Now   func() time.Time // the clock; nil is time.Now
}

// now reads the reporter's clock.
func (r Reporter) now() time.Time {
	if r.Now == nil {
		return time.Now()
	}
	return r.Now()
}

// ticker decides when a line is due: every Every of the clock after start.
type ticker struct {
	r    Reporter
	last time.Time
}

// newTicker starts a ticker at the clock's present.
func (r Reporter) newTicker() *ticker { return &ticker{r: r, last: r.now()} }

// due reports whether a line is due now, and if so starts the next interval.
func (k *ticker) due() bool {
	if k.r.Every <= 0 || k.r.Log == nil || k.r.Bar != nil {
		return false
	}
	now := k.r.now()
	if now.Sub(k.last) < k.r.Every {
		return false
	}
	k.last = now
	return true
}

// Evaluation returns the progress of an evaluation called what ("final validation"): a
// bar over its batches, cleared when it ends, or a line every Every with the batches done,
// the time taken and the time left at the rate so far.
func (r Reporter) Evaluation(what string) EvalProgress { return r.Task("evaluating", what, "batches") }

// Task returns the progress of work called what, counted in units (inversions, batches):
// a bar over the units, cleared when it ends, or a line every Every, its message msg, with
// the units done, the time taken and the time left at the rate so far.
func (r Reporter) Task(msg, what, units string) EvalProgress {
	start := r.now()
	tick := r.newTicker()
	var bar *progressbar.ProgressBar
	return func(done, total int) {
		if r.Bar != nil {
			if bar == nil {
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(r.Bar), progressbar.OptionSetDescription(what),
					progressbar.OptionShowCount(), progressbar.OptionSetWidth(30), progressbar.OptionThrottle(200*time.Millisecond),
					progressbar.OptionClearOnFinish())
			}
			_ = bar.Set(done) // a bar that cannot be drawn must not stop the work
			return
		}
		if !tick.due() {
			return
		}
		took := r.now().Sub(start)
		left := time.Duration(float64(took) * float64(total-done) / float64(done))
		r.Log.Info(msg, "what", what, units, fmt.Sprintf("%d/%d", done, total),
			"elapsed", round(took), "left", round(left))
	}
}

// round is d to the second, or to the millisecond below 10 s.
func round(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// beat is what the progress lines of training steps sum: over the steps since the last
// line, and over the session but its first step (slower: it allocates).
type beat struct {
	tick       *ticker
	start      time.Time // the session's start on the reporter's clock
	steps      int
	loss       float64
	took       time.Duration
	runSteps   int
	runTook    time.Duration
	tokensStep int // tokens a step trains on, over the replicas
}

// startBeat sets up the session's reporter and its progress lines: rank 0 alone reports,
// every Run.ProgressEvery (0: DefaultProgressEvery).
func (t *trainer[T]) startBeat() {
	every := t.ProgressEvery
	if every == 0 {
		every = DefaultProgressEvery
	}
	t.rep = Reporter{Bar: t.Progress, Log: t.Log, Every: every, Now: t.Clock}
	if !t.lead() {
		t.rep.Log, t.rep.Bar = nil, nil
	}
	t.beat = beat{tick: t.rep.newTicker(), start: t.rep.now(), tokensStep: t.Opt.Batch * t.Model.Cfg.Context}
}

// progress records step number step, of the given loss, which took took: it moves the
// progress bar on, or logs a line when one is due (Run.ProgressEvery). The bar's errors,
// those of drawing it on the terminal, are dropped here and in newBar and finish: a bar
// that cannot be drawn must not stop a run, whose metrics log records every step.
func (t *trainer[T]) progress(step int, loss float64, took time.Duration) {
	t.bar.Describe(fmt.Sprintf("loss %.3f  bpc %.3f", loss, BPC(loss)))
	_ = t.bar.Add(1)
	b := &t.beat
	b.steps, b.loss, b.took = b.steps+1, b.loss+loss, b.took+took
	if step > t.start {
		b.runSteps, b.runTook = b.runSteps+1, b.runTook+took
	}
	if !b.tick.due() {
		return
	}
	done := step + 1
	perStep := b.took / time.Duration(b.steps)
	if b.runSteps > 0 {
		perStep = b.runTook / time.Duration(b.runSteps)
	}
	left := time.Duration(t.Opt.Steps-done)*perStep + t.evaluationLeft(done)
	t.rep.Log.Info("progress", "step", fmt.Sprintf("%d/%d", done, t.Opt.Steps), "loss", fmt.Sprintf("%.4f", b.loss/float64(b.steps)),
		"ms_per_step", fmt.Sprintf("%.1f", b.took.Seconds()*1000/float64(b.steps)),
		"tokens_per_s", fmt.Sprintf("%.0f", float64(b.steps*b.tokensStep)/b.took.Seconds()),
		"elapsed", round(t.rep.now().Sub(b.start)+t.before), "left", round(left))
	b.steps, b.loss, b.took = 0, 0, 0
}
