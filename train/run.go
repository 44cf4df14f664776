package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/schollz/progressbar/v3"

	"lipformer/data"
	"lipformer/dist"
	"lipformer/internal/atomicfile"
	"lipformer/internal/jsonfloat"
	"lipformer/model"
	"lipformer/ngram"
)

// Checkpoint files in the output directory, and the metadata keys of the training state.
const (
	LatestFile = "ckpt.safetensors" // written at every finite validation, at the end and on interrupt
	BestFile   = "best.safetensors" // the checkpoint of the best validation
	LockFile   = "train.lock"       // the PID of the process training in the directory, which holds its flock
	MetaTrain  = "lipformer.train"  // JSON Options
	MetaStep   = "lipformer.step"   // steps completed
	MetaBest   = "lipformer.best"   // JSON {step, val_loss} of the best validation so far
	// MetaCorpus (corpus.go) holds the corpus's identity, JSON CorpusID.
)

// BaselineOrders returns the orders of the n-gram baselines in
// [Summary.Baselines]: bigram, trigram and 5-gram.
func BaselineOrders() []int { return []int{2, 3, 5} }

// ErrNonFinite is returned when a step's loss or gradient, a validation loss or a weight
// is not finite.
var ErrNonFinite = errors.New("non-finite loss, gradient or weight")

// ErrRunInUse is returned when another process holds the lock of a run directory.
var ErrRunInUse = errors.New("run directory in use")

// Run is one training run.
type Run struct {
	Model    *model.Model
	Corpus   *data.Corpus
	Opt      Options
	Out      string            // output directory
	Resume   *model.Checkpoint // the checkpoint to continue from, or nil
	Log      *slog.Logger
	Progress io.Writer // where a progress bar is drawn, or nil
	Certify  bool      // add the certified Lipschitz constants of the final weights to the summary
	// Restart starts a new run over the one in Out that stopped before its first
	// checkpoint (ActRestart): Train removes its metrics log, under the lock.
	Restart bool
	// Comm is the job of data-parallel replicas the run is one of (replicas.go), or nil
	// for a run of one process. Every rank calls Train with the same options.
	Comm dist.Comm
}

// Train runs the optimisation and returns its summary, also written to OUT/summary.json.
//
// While it runs it holds an exclusive lock of OUT (LockFile, where available), and it
// refuses a directory another process holds, a new run in a directory that holds one
// (but for Restart), a resume that leaves no step to train and a resume on a corpus of
// another vocabulary, or of another size or SHA-256 than the checkpoint stores
// (CorpusID), before it writes anything. Then it removes the
// temporary files that interrupted writes of the directory's files left behind, and a
// resume truncates a torn last row of the metrics log (RepairMetrics).
//
// A checkpoint is saved only when its weights are finite, and at a validation only when
// the validation loss is finite too. On a cancelled ctx it saves a checkpoint and returns
// the summary so far with Interrupted set. On a non-finite loss, gradient, validation loss
// or weight it stops without saving one and returns the summary with an error wrapping
// ErrNonFinite, which names the last good checkpoint or says that none was saved. Figures
// a run did not measure are NaN in the summary (Figure). On a rank other than 0 of Comm it
// trains its share of the batch in step with the others and writes nothing (replicas.go).
func (r *Run) Train(ctx context.Context) (*Summary, error) {
	if err := r.Opt.Validate(); err != nil {
		return nil, err
	}
	if r.comm().Rank() != 0 {
		return r.dispatch(ctx) // the run directory is rank 0's
	}
	if err := os.MkdirAll(r.Out, 0o755); err != nil {
		return nil, err
	}
	unlock, err := lockRun(r.Out, r.Log)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := r.checkStart(); err != nil {
		return nil, err
	}
	if err := removeTemporaries(r.Out, r.Log); err != nil {
		return nil, err
	}
	return r.dispatch(ctx)
}

// trainer is the state of a run whose parameters have element type T.
type trainer[T Float] struct {
	*Run
	st     *Stepper[T] // the training program and the optimizer
	eval   *model.Program
	best   bestVal
	good   int // the step of the last good LatestFile (finite weights and validation), or -1
	stab   *Stability
	before time.Duration // training time of the sessions before a resume
}

// bestVal is the best periodic validation so far.
type bestVal struct {
	Step    int             `json:"step"`
	ValLoss jsonfloat.Float `json:"val_loss"` // +Inf before the first validation
}

func train[T Float](ctx context.Context, r *Run) (*Summary, error) {
	t, start, err := newTrainer[T](r)
	if err != nil {
		return nil, err
	}
	defer t.close()
	vocab := r.Corpus.Vocab
	trainTok, err := vocab.EncodeCompact(r.Corpus.Train)
	if err != nil {
		return nil, fmt.Errorf("train split: %w", err)
	}
	valTok, err := vocab.EncodeCompact(r.Corpus.Valid)
	if err != nil {
		return nil, fmt.Errorf("valid split: %w", err)
	}
	sampler, err := data.NewSampler(trainTok, r.Model.Cfg.Context, r.Opt.Batch, r.Opt.Seed)
	if err != nil {
		return nil, fmt.Errorf("train split: %w", err)
	}
	sched, _ := r.Opt.schedule()
	metrics, err := t.openMetrics()
	if err != nil {
		return nil, err
	}
	defer metrics.Close()
	nan := NotMeasured()
	sum := &Summary{Model: r.Model.Cfg, Options: r.Opt, Corpus: r.Corpus.Name, CorpusID: IdentifyCorpus(r.Corpus), Params: r.Model.NumParams(), BestStep: -1,
		TokensPerS: nan, FinalValBPC: nan, BestValBPC: nan, TestBPC: nan,
		EvalProtocol: "bits per byte over every byte of the split but its first, in consecutive non-overlapping windows of the context length"}
	bar := newBar(r.Progress, r.Opt.Steps, start)
	began := time.Now().Add(-t.before) // elapsed times continue across resumes
	tokens := r.Opt.Batch * r.Model.Cfg.Context
	var estimate runEstimate
	step := start
	for ; step < r.Opt.Steps; step++ {
		stop, err := t.interrupted(ctx)
		if err != nil {
			return nil, err
		}
		if stop {
			sum.Interrupted = true
			r.Log.Info("interrupted: saving a checkpoint", "step", step)
			break
		}
		t0 := time.Now()
		loss, norm, err := t.step(sampler, step)
		if err != nil {
			return nil, err
		}
		t.stab.Observe(step, loss, norm)
		if !finite(loss) || !finite(norm) {
			t.timing(sum, step, start, began)
			if err := metrics.WriteTrain(TrainRow{Step: step, Loss: loss, LR: sched.LR(step), GradNorm: norm, ElapsedS: sum.Seconds}); err != nil {
				return nil, err
			}
			return t.diverged(sum, fmt.Sprintf("step %d: loss %v, gradient norm %v", step, loss, norm))
		}
		lr := sched.LR(step)
		if err := t.st.Update(lr); err != nil {
			return nil, err
		}
		if err := metrics.WriteTrain(TrainRow{Step: step, Loss: loss, LR: lr, GradNorm: norm,
			TokensPerS: float64(tokens) / time.Since(t0).Seconds(), ElapsedS: time.Since(began).Seconds()}); err != nil {
			return nil, err
		}
		if n := r.Opt.LogLipschitz; n > 0 && (step+1)%n == 0 {
			layers, err := r.Model.AttentionReport()
			if err != nil {
				return nil, err
			}
			if err := metrics.WriteLipschitz(LipschitzRow{Step: step + 1, Layers: layers}); err != nil {
				return nil, err
			}
		}
		bar.Describe(fmt.Sprintf("loss %.3f  bpc %.3f", loss, BPC(loss)))
		bar.Add(1)
		if err := t.observe(&estimate, start, step, time.Since(t0), valTok); err != nil {
			return nil, err
		}
		if (step+1)%r.Opt.EvalEvery == 0 && step+1 < r.Opt.Steps {
			bad, err := t.validate(step+1, valTok, metrics, began)
			if err != nil {
				return nil, err
			}
			if bad != "" {
				t.timing(sum, step+1, start, began)
				return t.diverged(sum, bad)
			}
		}
	}
	bar.Finish()
	t.timing(sum, step, start, began)
	if !sum.Interrupted {
		bad, err := t.validate(step, valTok, metrics, began)
		if err != nil {
			return nil, err
		}
		if bad != "" {
			return t.diverged(sum, bad)
		}
		if err := t.finalScores(sum, valTok); err != nil {
			return nil, err
		}
	}
	if bad := t.nonFiniteWeight(); bad != "" {
		return t.diverged(sum, fmt.Sprintf("after %d steps: %s", step, bad))
	}
	if err := t.save(LatestFile, step); err != nil {
		return nil, err
	}
	t.good = step
	if r.Certify {
		if sum.Certificate, err = r.Model.Certificate(); err != nil {
			return nil, err
		}
	}
	t.record(sum)
	return sum, t.writeSummary(sum)
}

// timing records in sum the steps completed, the training time and the speed of this
// session, which is not measured when the session ran no step.
func (t *trainer[T]) timing(sum *Summary, steps, start int, began time.Time) {
	sum.Steps, sum.Seconds = steps, time.Since(began).Seconds()
	if steps > start {
		tokens := t.Opt.Batch * t.Model.Cfg.Context
		sum.TokensPerS = Figure(float64((steps-start)*tokens) / (sum.Seconds - t.before.Seconds()))
	}
}

// record puts the best validation and the stability figures in sum.
func (t *trainer[T]) record(sum *Summary) {
	if sum.BestStep, sum.Stability = t.best.Step, t.stab.Summary(); sum.BestStep >= 0 {
		sum.BestValBPC = Figure(BPC(float64(t.best.ValLoss)))
	}
}

// diverged ends a run stopped by the non-finite value that what describes: it writes the
// summary, marked NonFinite, and returns it with an error wrapping ErrNonFinite that
// names the checkpoints left.
func (t *trainer[T]) diverged(sum *Summary, what string) (*Summary, error) {
	sum.NonFinite = true
	t.record(sum)
	if err := t.writeSummary(sum); err != nil {
		return nil, err
	}
	return sum, fmt.Errorf("%s: %w; %s", what, ErrNonFinite, t.goodCheckpoints())
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

// nonFiniteWeight describes the first parameter or buffer element of the model that is
// not finite, or returns "" when all are.
func (t *trainer[T]) nonFiniteWeight() string {
	check := func(kind, name string, data any) string {
		v, _ := data.([]T)
		for i, x := range v {
			if !finite(float64(x)) {
				return fmt.Sprintf("%s %s element %d is %v", kind, name, i, x)
			}
		}
		return ""
	}
	for _, p := range t.Model.Params() {
		if bad := check("weight", p.Name, p.Value.Data()); bad != "" {
			return bad
		}
	}
	for _, b := range t.Model.Buffers() {
		if bad := check("buffer", b.Name, b.Value.Data()); bad != "" {
			return bad
		}
	}
	return ""
}

// newTrainer compiles the programs, builds the optimizer and, when resuming, restores its
// state, the best validation and the stability record. It returns the first step to run.
func newTrainer[T Float](r *Run) (*trainer[T], int, error) {
	batch, err := r.replicaBatch()
	if err != nil {
		return nil, 0, err
	}
	st, err := NewStepper[T](r.Model, batch, r.Opt.AdamConfig(), r.Opt.Clip, replicaSeed(r.Opt.Seed, r.comm().Rank()))
	if err != nil {
		return nil, 0, err
	}
	st.Comm = r.Comm
	eval, err := r.Model.NewProgram(model.Eval, batch)
	if err != nil {
		st.Close()
		return nil, 0, err
	}
	t := &trainer[T]{Run: r, st: st, eval: eval, best: bestVal{Step: -1, ValLoss: jsonfloat.Float(math.Inf(1))}, good: -1}
	if t.stab, err = NewStability(DefaultStabilityConfig()); err != nil {
		t.close()
		return nil, 0, err
	}
	start := 0
	if r.Resume != nil {
		if start, err = t.restore(r.Resume); err != nil {
			t.close()
			return nil, 0, err
		}
		t.good = start // Load refuses non-finite weights, and a bad validation saves no checkpoint
	}
	if err := t.checkReplicas("start"); err != nil {
		t.close()
		return nil, 0, err
	}
	return t, start, nil
}

// close releases the trainer's programs.
func (t *trainer[T]) close() {
	t.st.Close()
	t.eval.Close()
}

// restore loads the optimizer state and best validation from a checkpoint and replays the
// run's training rows into the stability record.
func (t *trainer[T]) restore(ck *model.Checkpoint) (int, error) {
	start, err := ck.MetaInt(MetaStep)
	if err != nil {
		return 0, err
	}
	if err := t.st.Adam.LoadState(ck.Extra, ck.Meta); err != nil {
		return 0, fmt.Errorf("resume: %w", err)
	}
	if err := json.Unmarshal([]byte(ck.Meta[MetaBest]), &t.best); err != nil {
		return 0, fmt.Errorf("resume: metadata %s: %w", MetaBest, err)
	}
	if !t.lead() {
		return start, nil // the metrics log is rank 0's
	}
	path := filepath.Join(t.Out, MetricsFile)
	torn, err := RepairMetrics(path)
	if err != nil {
		return 0, fmt.Errorf("resume: %w", err)
	}
	if torn > 0 {
		t.Log.Warn("the metrics log ended in a torn row (a write was cut short): truncated it after its last complete row",
			"file", path, "bytes_removed", torn)
	}
	m, err := ReadMetrics(path)
	if err != nil {
		return 0, fmt.Errorf("resume: %w", err)
	}
	kept := Metrics{}
	trainT, _ := m.Times()
	for i, row := range m.Train {
		if row.Step < start {
			t.stab.Observe(row.Step, row.Loss, row.GradNorm)
			kept.Train = append(kept.Train, row)
			t.before = time.Duration(trainT[i] * float64(time.Second))
		}
	}
	for _, row := range m.Eval {
		if row.Step <= start {
			kept.Eval = append(kept.Eval, row)
		}
	}
	for _, row := range m.Lipschitz {
		if row.Step <= start {
			kept.Lipschitz = append(kept.Lipschitz, row)
		}
	}
	return start, atomicfile.Write(path, func(w io.Writer) error { return kept.Write(w) })
}

// step runs one optimisation step's forward and backward pass on batch number step and
// clips the gradient (Stepper.Gradients). It returns the loss and the gradient norm before
// clipping; the caller applies the update.
func (t *trainer[T]) step(s *data.Sampler[uint8], step int) (float64, float64, error) {
	if err := t.sample(s, step); err != nil {
		return 0, 0, err
	}
	return t.st.Gradients(step)
}

// validate scores the first EvalBytes of the validation split, logs and records it and,
// when the loss and the weights are finite, saves the latest checkpoint (and the best one
// when it improves). Otherwise it saves nothing and describes what is not finite.
func (t *trainer[T]) validate(step int, val []uint8, metrics *MetricsWriter, began time.Time) (string, error) {
	if t.Opt.EvalBytes > 0 && len(val) > t.Opt.EvalBytes {
		val = val[:t.Opt.EvalBytes]
	}
	loss, _, err := t.evaluate(val)
	if err != nil {
		return "", fmt.Errorf("validation at step %d: %w", step, err)
	}
	if err := metrics.WriteEval(EvalRow{Step: step, ValLoss: loss, ElapsedS: time.Since(began).Seconds()}); err != nil {
		return "", err
	}
	t.Log.Info("validation", "step", step, "val_bpc", fmt.Sprintf("%.4f", BPC(loss)))
	if !finite(loss) {
		return fmt.Sprintf("validation at step %d: val loss %v", step, loss), nil
	}
	if bad := t.nonFiniteWeight(); bad != "" {
		return fmt.Sprintf("validation at step %d: %s", step, bad), nil
	}
	if err := t.checkReplicas(fmt.Sprintf("validation at step %d", step)); err != nil {
		return "", err
	}
	if loss < float64(t.best.ValLoss) {
		t.best = bestVal{Step: step, ValLoss: jsonfloat.Float(loss)}
		if err := t.save(BestFile, step); err != nil {
			return "", err
		}
	}
	if err := t.save(LatestFile, step); err != nil {
		return "", err
	}
	t.good = step
	return "", nil
}

// finalScores evaluates the final weights on the whole validation and test splits.
func (t *trainer[T]) finalScores(sum *Summary, val []uint8) error {
	loss, n, err := t.evaluate(val)
	if err != nil {
		return err
	}
	sum.FinalValBPC, sum.ValBytes = Figure(BPC(loss)), n
	test, err := t.Corpus.Vocab.EncodeCompact(t.Corpus.Test)
	if err != nil {
		return fmt.Errorf("test split: %w", err)
	}
	if loss, n, err = t.evaluate(test); err != nil {
		return err
	}
	sum.TestBPC, sum.TestBytes = Figure(BPC(loss)), n
	if sum.Baselines, err = ngram.Baselines(t.Corpus.Train, t.Corpus.Test, t.Corpus.Vocab.Bytes(), BaselineOrders()); err != nil {
		return fmt.Errorf("n-gram baselines: %w", err)
	}
	t.Log.Info("final", "val_bpc", fmt.Sprintf("%.4f", float64(sum.FinalValBPC)), "test_bpc", fmt.Sprintf("%.4f", float64(sum.TestBPC)),
		"baselines", ngram.Format(sum.Baselines))
	return nil
}

// save writes a checkpoint with the optimizer state and the training state after step
// completed steps.
func (t *trainer[T]) save(name string, step int) error {
	if !t.lead() {
		return nil // the run directory is rank 0's
	}
	opt, err := json.Marshal(t.Opt)
	if err != nil {
		return err
	}
	best, err := json.Marshal(t.best)
	if err != nil {
		return err
	}
	corpus, err := json.Marshal(IdentifyCorpus(t.Corpus))
	if err != nil {
		return err
	}
	state, meta := t.st.Adam.State()
	meta[MetaTrain], meta[MetaStep], meta[MetaBest] = string(opt), strconv.Itoa(step), string(best)
	meta[MetaCorpus] = string(corpus)
	return t.Model.Save(filepath.Join(t.Out, name), t.Corpus.Vocab.Bytes(), state, meta)
}

// newBar is a progress bar over the steps on w, or a silent one when w is nil.
func newBar(w io.Writer, steps, start int) *progressbar.ProgressBar {
	if w == nil {
		return progressbar.DefaultSilent(int64(steps))
	}
	bar := progressbar.NewOptions(steps, progressbar.OptionSetWriter(w), progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30), progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("steps"), progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }))
	bar.Set(start)
	return bar
}
