package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/schollz/progressbar/v3"

	"lipformer/data"
	"lipformer/internal/jsonfloat"
	"lipformer/ngram"
	"lipformer/ops"
)

// The training loop of Run.Train. A stop at a non-finite loss, gradient, validation loss
// or weight travels as an error wrapping ErrNonFinite up to train, which records it in the
// summary (diverged); every other error ends the run without a summary.

// train is one session of the run r: the steps from its first (0, or the resumed
// checkpoint's) to the last or an interrupt, then the final scores and checkpoint.
func train[T Float](ctx context.Context, r *Run) (_ *Summary, err error) {
	t, err := newTrainer[T](r)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, t.close()) }()
	if err := t.begin(); err != nil {
		return nil, err
	}
	step, err := t.steps(ctx)
	t.timing(step)
	if err == nil {
		err = t.finish(ctx, step)
	}
	switch {
	case errors.Is(err, ErrNonFinite):
		return t.diverged(err)
	case err != nil:
		return nil, err
	}
	t.record()
	return t.sum, t.writeSummary(t.sum)
}

// begin prepares the session: the splits' tokens, the batch sampler, the learning-rate
// schedule, the metrics log, the summary, the progress bar and the clock.
func (t *trainer[T]) begin() error {
	vocab := t.Corpus.Vocab
	trainTok, err := vocab.EncodeCompact(t.Corpus.Train)
	if err != nil {
		return fmt.Errorf("train split: %w", err)
	}
	if t.val, err = vocab.EncodeCompact(t.Corpus.Valid); err != nil {
		return fmt.Errorf("valid split: %w", err)
	}
	if t.sampler, err = data.NewSampler(trainTok, t.Model.Cfg.Context, t.Opt.Batch, t.Opt.Seed); err != nil {
		return fmt.Errorf("train split: %w", err)
	}
	if t.sched, err = t.Opt.schedule(); err != nil {
		return err // Options.Validate, which Train calls first, refuses such options
	}
	if t.metrics, err = t.openMetrics(); err != nil {
		return fmt.Errorf("metrics log: %w", err)
	}
	nan := NotMeasured()
	t.sum = &Summary{Model: t.Model.Cfg, Options: t.Opt, Corpus: t.Corpus.Name, CorpusID: IdentifyCorpus(t.Corpus), Params: t.Model.NumParams(), BestStep: -1,
		TokensPerS: nan, FinalValBPC: nan, BestValBPC: nan, TestBPC: nan, FinalValAcc: nan, TestAcc: nan,
		EvalProtocol: "bits per byte over every byte of the split but its first, in consecutive non-overlapping windows of the context length"}
	t.bar = newBar(t.Progress, t.Opt.Steps, t.start)
	t.began = time.Now().Add(-t.before) // elapsed times continue across resumes
	t.startBeat()
	if t.Resume != nil {
		t.Log.Info(fmt.Sprintf("resumed from step %d", t.start), "dir", t.Out, "steps", t.Opt.Steps)
	}
	return nil
}

// steps runs the session's steps until the last, an interrupt or an error, and returns
// the number of steps completed. A new run first validates its initial weights, so that
// its curve starts at step 0. After each step it logs the attention layers' bounds
// (Options.LogLipschitz), the estimated time left and, every EvalEvery steps but the last
// (finish's), a validation.
func (t *trainer[T]) steps(ctx context.Context) (int, error) {
	if t.start == 0 && t.Opt.Steps > 0 {
		if _, err := t.score(ctx, 0, "initial validation"); err != nil {
			return 0, t.stopped(ctx, err, "the initial validation", 0)
		}
		if t.sum.Interrupted {
			return 0, nil
		}
	}
	for step := t.start; step < t.Opt.Steps; step++ {
		if stop, err := t.interrupt(ctx, step); stop || err != nil {
			return step, err
		}
		t0 := time.Now()
		if err := t.trainStep(step); err != nil {
			return step, err
		}
		done := step + 1
		if err := t.logLipschitz(done); err != nil {
			return done, err
		}
		if err := t.observe(step, time.Since(t0)); err != nil {
			return done, err
		}
		if done%t.Opt.EvalEvery == 0 && done < t.Opt.Steps {
			if err := t.validate(ctx, done); err != nil {
				return done, t.stopped(ctx, err, "a validation", done)
			}
		}
	}
	return t.Opt.Steps, nil
}

// interrupt reports whether ctx is cancelled, on any replica, before step; then the
// summary records the interrupt.
func (t *trainer[T]) interrupt(ctx context.Context, step int) (bool, error) {
	stop, err := t.interrupted(ctx)
	if err != nil {
		return false, fmt.Errorf("step %d: %w", step, err)
	}
	if stop {
		t.sum.Interrupted = true
		t.Log.Info("interrupted: saving a checkpoint", "step", step)
	}
	return stop, nil
}

// stopped is err, unless it is ctx's cancellation, which interrupted the evaluation
// called what: then the summary records the interrupt and stopped returns nil, so that
// the session ends as at an interrupt between steps (the checkpoint of the weights so far
// is saved).
func (t *trainer[T]) stopped(ctx context.Context, err error, what string, step int) error {
	if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
		return err
	}
	t.sum.Interrupted = true
	t.Log.Info("interrupted during "+what+": saving a checkpoint", "step", step)
	return nil
}

// trainStep runs training step number step on this replica's rows of its batch
// (Stepper.Step) and records it in the stability figures, the metrics log and the
// progress bar. A non-finite loss or gradient norm leaves the weights alone and is
// recorded too, and returned as Stepper.Step's error, which wraps ErrNonFinite.
func (t *trainer[T]) trainStep(step int) error {
	t0, c0 := time.Now(), t.rep.now()
	if err := t.sample(t.sampler, step); err != nil {
		return fmt.Errorf("step %d: batch: %w", step, err)
	}
	lr := t.sched.LR(step)
	loss, norm, err := t.st.Step(step, lr)
	nonFinite := errors.Is(err, ErrNonFinite)
	if err != nil && !nonFinite {
		return err
	}
	t.stab.Observe(step, loss, norm)
	row := TrainRow{Step: step, Loss: loss, LR: lr, GradNorm: norm, ElapsedS: time.Since(t.began).Seconds()}
	if !nonFinite {
		row.TokensPerS = float64(t.Opt.Batch*t.Model.Cfg.Context) / time.Since(t0).Seconds()
	}
	if werr := t.metrics.WriteTrain(row); werr != nil {
		return fmt.Errorf("step %d: metrics log: %w", step, werr)
	}
	if nonFinite {
		return err
	}
	t.progress(step, loss, t.rep.now().Sub(c0))
	return nil
}

// logLipschitz writes the attention layers' report (model.AttentionReport) to the metrics
// log after every Options.LogLipschitz steps.
func (t *trainer[T]) logLipschitz(done int) error {
	if n := t.Opt.LogLipschitz; n <= 0 || done%n != 0 {
		return nil
	}
	layers, err := t.Model.AttentionReport()
	if err != nil {
		return fmt.Errorf("step %d: attention report: %w", done, err)
	}
	if err := t.metrics.WriteLipschitz(LipschitzRow{Step: done, Layers: layers}); err != nil {
		return fmt.Errorf("step %d: metrics log: %w", done, err)
	}
	return nil
}

// validate scores the first EvalBytes of the validation split after step completed
// steps, logs and records it and, when the loss and the weights are finite, saves the
// latest checkpoint (and the best one when it improves). Otherwise it saves nothing and
// returns an error wrapping ErrNonFinite that says what is not finite.
func (t *trainer[T]) validate(ctx context.Context, step int) error {
	loss, err := t.score(ctx, step, "validation")
	if err != nil {
		return err
	}
	if err := t.finiteWeights(); err != nil {
		return fmt.Errorf("validation at step %d: %w", step, err)
	}
	if err := t.checkReplicas(fmt.Sprintf("validation at step %d", step)); err != nil {
		return err
	}
	if loss < float64(t.best.ValLoss) {
		t.best = bestVal{Step: step, ValLoss: jsonfloat.Float(loss)}
		if err := t.save(BestFile, step); err != nil {
			return err
		}
	}
	if err := t.save(LatestFile, step); err != nil {
		return err
	}
	t.good = step
	return nil
}

// score scores the first EvalBytes of the validation split after step completed steps,
// writes the metrics row and logs it as msg, and returns the loss in nats: an error
// wrapping ErrNonFinite when it is not finite.
func (t *trainer[T]) score(ctx context.Context, step int, msg string) (float64, error) {
	val := t.val
	if t.Opt.EvalBytes > 0 && len(val) > t.Opt.EvalBytes {
		val = val[:t.Opt.EvalBytes]
	}
	s, err := t.evaluate(ctx, val, fmt.Sprintf("validation at step %d", step)) // the bytes scored: those of EvalBytes, or all
	if errors.Is(err, ops.ErrNonFinite) {
		return 0, fmt.Errorf("validation at step %d: %w: %w", step, ErrNonFinite, err)
	}
	if err != nil {
		return 0, fmt.Errorf("validation at step %d: %w", step, err)
	}
	loss := s.Nats
	if err := t.metrics.WriteEval(EvalRow{Step: step, ValLoss: loss, ElapsedS: time.Since(t.began).Seconds()}); err != nil {
		return 0, fmt.Errorf("validation at step %d: metrics log: %w", step, err)
	}
	t.Log.Info(msg, "step", step, "val_bpc", fmt.Sprintf("%.4f", BPC(loss)))
	if !finite(loss) {
		return 0, fmt.Errorf("validation at step %d: val loss %v: %w", step, loss, ErrNonFinite)
	}
	return loss, nil
}

// finish ends a session that completed step steps: unless it was interrupted,
// Options.FinalPowerIters power iterations on the final weights, the last validation and
// the final scores; then the latest checkpoint of the final weights, when
// they are finite, and with Run.Certify or a model bounded end to end their certified
// Lipschitz constants. An interrupt during the last validation or the final scores leaves
// them out (stopped).
func (t *trainer[T]) finish(ctx context.Context, step int) error {
	_ = t.bar.Finish() // as progress explains
	if !t.sum.Interrupted {
		if n := t.Opt.FinalPowerIters; n > 0 && len(t.Model.Buffers()) > 0 { // a model with power-iteration vectors
			t.Model.PowerIterate(n)
			t.Log.Info("refined the power-iteration estimates of the final weights", "iterations", n)
		}
		err := t.validate(ctx, step)
		if err == nil {
			err = t.finalScores(ctx)
		}
		if err := t.stopped(ctx, err, "the final evaluation", step); err != nil {
			return err
		}
	}
	if err := t.finiteWeights(); err != nil {
		return fmt.Errorf("after %d steps: %w", step, err)
	}
	if err := t.save(LatestFile, step); err != nil {
		return err
	}
	t.good = step
	if t.Certify || t.Model.Cfg.LipK > 0 {
		c, err := t.Model.Certificate()
		if err != nil {
			return fmt.Errorf("certificate of the final weights: %w", err)
		}
		t.sum.Certificate = c
	}
	return nil
}

// finalScores evaluates the final weights on the whole validation and test splits and
// puts the scores and the n-gram baselines in the summary.
func (t *trainer[T]) finalScores(ctx context.Context) error {
	val, err := t.evaluate(ctx, t.val, "final validation (the whole split)")
	if err != nil {
		return fmt.Errorf("final validation: %w", err)
	}
	t.sum.FinalValBPC, t.sum.ValBytes, t.sum.FinalValAcc = Figure(BPC(val.Nats)), val.Scored, Figure(val.Accuracy())
	test, err := t.Corpus.Vocab.EncodeCompact(t.Corpus.Test)
	if err != nil {
		return fmt.Errorf("test split: %w", err)
	}
	s, err := t.evaluate(ctx, test, "test (the whole split)")
	if err != nil {
		return fmt.Errorf("test split: %w", err)
	}
	t.sum.TestBPC, t.sum.TestBytes, t.sum.TestAcc = Figure(BPC(s.Nats)), s.Scored, Figure(s.Accuracy())
	if t.sum.Baselines, err = ngram.Baselines(t.Corpus.Train, t.Corpus.Test, t.Corpus.Vocab.Bytes(), BaselineOrders()); err != nil {
		return fmt.Errorf("n-gram baselines: %w", err)
	}
	t.Log.Info("final", "val_bpc", fmt.Sprintf("%.4f", float64(t.sum.FinalValBPC)), "test_bpc", fmt.Sprintf("%.4f", float64(t.sum.TestBPC)),
		"val_acc", fmt.Sprintf("%.4f", float64(t.sum.FinalValAcc)), "test_acc", fmt.Sprintf("%.4f", float64(t.sum.TestAcc)),
		"baselines", ngram.Format(t.sum.Baselines))
	return nil
}

// timing records in the summary the steps completed, the training time and the speed of
// this session, which is not measured when the session ran no step.
func (t *trainer[T]) timing(steps int) {
	t.sum.Steps, t.sum.Seconds = steps, time.Since(t.began).Seconds()
	if steps > t.start {
		tokens := t.Opt.Batch * t.Model.Cfg.Context
		t.sum.TokensPerS = Figure(float64((steps-t.start)*tokens) / (t.sum.Seconds - t.before.Seconds()))
	}
}

// record puts the best validation and the stability figures in the summary.
func (t *trainer[T]) record() {
	if t.sum.BestStep, t.sum.Stability = t.best.Step, t.stab.Summary(); t.sum.BestStep >= 0 {
		t.sum.BestValBPC = Figure(BPC(float64(t.best.ValLoss)))
	}
}

// diverged ends a run stopped by the non-finite value that stop (wrapping ErrNonFinite)
// describes: it writes the summary, marked NonFinite, and returns it with stop and the
// checkpoints left.
func (t *trainer[T]) diverged(stop error) (*Summary, error) {
	t.sum.NonFinite = true
	t.record()
	if err := t.writeSummary(t.sum); err != nil {
		return nil, err
	}
	return t.sum, fmt.Errorf("%w; %s", stop, t.goodCheckpoints())
}

// goodCheckpoints names the checkpoints of finite weights (and validation) that the run
// directory holds, or says that there is none.
func (t *trainer[T]) goodCheckpoints() string {
	if t.good < 0 {
		return fmt.Sprintf("no good checkpoint was saved (one is saved at every validation, every %d steps)", t.Opt.EvalEvery)
	}
	s := fmt.Sprintf("the last good checkpoint is %s (step %d)", filepath.Join(t.Out, LatestFile), t.good)
	if t.best.Step >= 0 && t.best.Step != t.good {
		s += fmt.Sprintf(", the best %s (step %d)", filepath.Join(t.Out, BestFile), t.best.Step)
	}
	return s
}

// finiteWeights returns an error wrapping ErrNonFinite that names the first parameter or
// buffer element of the model that is not finite, or nil when all are.
func (t *trainer[T]) finiteWeights() error {
	check := func(kind, name string, data any) error {
		v, ok := data.([]T)
		if !ok {
			var zero T
			return fmt.Errorf("%s %s holds %T, not []%T", kind, name, data, zero)
		}
		for i, x := range v {
			if !finite(float64(x)) {
				return fmt.Errorf("%s %s element %d is %v: %w", kind, name, i, x, ErrNonFinite)
			}
		}
		return nil
	}
	for _, p := range t.Model.Params() {
		if err := check("weight", p.Name, p.Value.Data()); err != nil {
			return err
		}
	}
	for _, b := range t.Model.Buffers() {
		if err := check("buffer", b.Name, b.Value.Data()); err != nil {
			return err
		}
	}
	return nil
}

// newBar is a progress bar over the steps on w, or a silent one when w is nil.
func newBar(w io.Writer, steps, start int) *progressbar.ProgressBar {
	if w == nil {
		return progressbar.DefaultSilent(int64(steps))
	}
	bar := progressbar.NewOptions(steps, progressbar.OptionSetWriter(w), progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30), progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("steps"), progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }))
	_ = bar.Set(start) // as progress explains
	return bar
}
