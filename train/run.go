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
	Certify  bool      // add the certified Lipschitz constants of the final weights to the summary (always for a model with Cfg.LipK > 0)
	// Restart starts a new run over the one in Out that stopped before its first
	// checkpoint (ActRestart): Train removes its metrics log, under the lock.
	Restart bool
	// Comm is the job of data-parallel replicas the run is one of (replicas.go), or nil
	// for a run of one process. Every rank calls Train with the same options.
	Comm dist.Comm
	// ProgressEvery is the time between the progress lines logged when Progress is nil
	// (not a terminal): the steps done, the mean loss, ms per step and tokens per second
	// since the last line, the time elapsed and the time left, and the progress of
	// evaluations that take longer. 0 means DefaultProgressEvery; a negative value logs
	// none.
	ProgressEvery time.Duration
	// Clock is the clock of the progress lines; nil is time.Now.
	Clock func() time.Time
}

// Train runs the optimisation and returns its summary, also written to OUT/summary.json.
//
// While it runs it holds an exclusive lock of OUT (LockFile, where available), and it
// refuses a directory another process holds, a new run in a directory that holds one
// (but for Restart), a resume that leaves no step to train (but for one of a run stopped
// during its final evaluation, which computes it) and a resume on a corpus of
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
func (r *Run) Train(ctx context.Context) (sum *Summary, err error) {
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
	defer func() {
		if uerr := unlock(); uerr != nil {
			err = errors.Join(err, fmt.Errorf("unlock %s: %w", r.Out, uerr))
		}
	}()
	if err := r.checkStart(); err != nil {
		return nil, err
	}
	if err := removeTemporaries(r.Out, r.Log); err != nil {
		return nil, err
	}
	return r.dispatch(ctx)
}

// trainer is the state of a run whose parameters have element type T, and of the
// session of it that one call of Train runs (loop.go).
type trainer[T Float] struct {
	*Run
	st     *Stepper[T] // the training program and the optimizer
	eval   *model.Program
	best   bestVal
	good   int // the step of the last good LatestFile (finite weights and validation), or -1
	stab   *Stability
	before time.Duration // training time of the sessions before a resume
	start  int           // the first step of the session

	// set by begin
	val     []uint8 // the validation split's tokens
	sampler *data.Sampler[uint8]
	sched   Schedule
	metrics *MetricsWriter
	sum     *Summary
	bar     *progressbar.ProgressBar
	began   time.Time // when the run's clock started: the session's start less before
	est     runEstimate
	rep     Reporter // the progress lines and bars of the session (progress.go)
	beat    beat
}

// bestVal is the best periodic validation so far.
type bestVal struct {
	Step    int             `json:"step"`
	ValLoss jsonfloat.Float `json:"val_loss"` // +Inf before the first validation
}

// newTrainer compiles the programs, builds the optimizer and, when resuming, restores its
// state, the best validation and the stability record, and the first step to run.
func newTrainer[T Float](r *Run) (_ *trainer[T], err error) {
	batch, err := r.replicaBatch()
	if err != nil {
		return nil, err
	}
	step := r.Opt.StepConfig()
	step.Seed = replicaSeed(step.Seed, r.comm().Rank())
	st, err := NewStepper[T](r.Model, batch, step)
	if err != nil {
		return nil, err
	}
	st.Comm = r.Comm
	t := &trainer[T]{Run: r, st: st, best: bestVal{Step: -1, ValLoss: jsonfloat.Float(math.Inf(1))}, good: -1}
	defer func() {
		if err != nil {
			err = errors.Join(err, t.close())
		}
	}()
	if t.eval, err = r.Model.NewProgram(model.Eval, batch); err != nil {
		return nil, err
	}
	if t.stab, err = NewStability(DefaultStabilityConfig()); err != nil {
		return nil, err
	}
	if r.Resume != nil {
		if t.start, err = t.restore(r.Resume); err != nil {
			return nil, err
		}
		t.good = t.start // Load refuses non-finite weights, and a bad validation saves no checkpoint
	}
	if err := t.checkReplicas("start"); err != nil {
		return nil, err
	}
	return t, nil
}

// close releases the trainer's programs and closes its metrics log.
func (t *trainer[T]) close() error {
	err := t.st.Close()
	if t.eval != nil {
		err = errors.Join(err, t.eval.Close())
	}
	if t.metrics != nil {
		if cerr := t.metrics.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("metrics log: %w", cerr))
		}
	}
	return err
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
	trainT, _ := m.Times() // the training rows' times; the validation rows' are not needed
	for i, row := range m.Train {
		if row.Step < start {
			t.stab.Observe(row.Step, row.Loss, row.GradNorm)
			kept.Train = append(kept.Train, row)
			t.before = time.Duration(trainT[i] * float64(time.Second))
		}
	}
	for _, row := range m.Eval {
		if row.Step < start || row.Step == start && start < t.Opt.Steps { // at the last step, finish validates again
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

// save writes a checkpoint with the optimizer state and the training state after step
// completed steps.
func (t *trainer[T]) save(name string, step int) error {
	if !t.lead() {
		return nil // the run directory is rank 0's
	}
	opt, err := json.Marshal(t.Opt)
	if err != nil {
		return fmt.Errorf("checkpoint at step %d: options: %w", step, err)
	}
	best, err := json.Marshal(t.best)
	if err != nil {
		return fmt.Errorf("checkpoint at step %d: best validation: %w", step, err)
	}
	corpus, err := json.Marshal(IdentifyCorpus(t.Corpus))
	if err != nil {
		return fmt.Errorf("checkpoint at step %d: corpus identity: %w", step, err)
	}
	state, meta := t.st.Adam.State()
	meta[MetaTrain], meta[MetaStep], meta[MetaBest] = string(opt), strconv.Itoa(step), string(best)
	meta[MetaCorpus] = string(corpus)
	return t.Model.Save(filepath.Join(t.Out, name), t.Corpus.Vocab.Bytes(), state, meta)
}
