package train

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lipformer/data"
	"lipformer/spec"
)

// bigSplitsCorpus is a corpus of random lowercase text whose validation and test splits,
// 5% each, are large enough that scoring them one window at a time takes seconds.
func bigSplitsCorpus(t *testing.T, size int) *data.Corpus {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	text := make([]byte, size)
	for i := range text {
		text[i] = byte('a' + rng.IntN(26))
	}
	path := filepath.Join(t.TempDir(), "big.txt")
	if err := os.WriteFile(path, text, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := data.Load(context.Background(), path, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// cancelOn is a log handler that calls cancel, and records when, at the first record whose
// message is msg; the other records are dropped.
type cancelOn struct {
	msg    string
	cancel context.CancelFunc
	at     chan time.Time
}

func (h *cancelOn) Enabled(context.Context, slog.Level) bool { return true }
func (h *cancelOn) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *cancelOn) WithGroup(string) slog.Handler            { return h }
func (h *cancelOn) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case h.at <- time.Now():
			h.cancel()
		default:
		}
	}
	return nil
}

// TestInterruptDuringTheFinalEvaluation: a signal that arrives while the final scores
// are computed over the whole validation and test splits (seconds of work here: windows
// of 16 bytes one at a time) ends the run within a second, as an interrupt: the summary
// says so and has no final scores, and the latest checkpoint holds the trained steps.
func TestInterruptDuringTheFinalEvaluation(t *testing.T) {
	c := bigSplitsCorpus(t, 3_000_000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &cancelOn{msg: "validation", cancel: cancel, at: make(chan time.Time, 1)}
	opt := smallOptions(2)
	opt.Batch, opt.EvalEvery, opt.EvalBytes, opt.Warmup = 1, 2, 200, 1
	out := t.TempDir()
	r := &Run{Model: smallModel(t, c, spec.ContractiveL2, spec.Float32, 1), Corpus: c, Opt: opt, Out: out, Log: slog.New(h)}
	sum, err := r.Train(ctx) // the last validation (200 bytes) logs "validation", then the final scores begin
	end := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	var at time.Time
	select {
	case at = <-h.at:
	default:
		t.Fatal("the run logged no validation")
	}
	if took := end.Sub(at); took > time.Second {
		t.Errorf("the run returned %v after the interrupt, want within a second", took)
	}
	if !sum.Interrupted || sum.Steps != 2 || sum.FinalValBPC.Measured() || sum.TestBPC.Measured() {
		t.Errorf("summary: interrupted %t, steps %d, final val bpc %v, test bpc %v; want interrupted after 2 steps without final scores",
			sum.Interrupted, sum.Steps, sum.FinalValBPC, sum.TestBPC)
	}
	d, err := OpenRun(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, step, err := d.Resume(); err != nil || step != 2 {
		t.Errorf("latest checkpoint at step %d (error %v), want 2", step, err)
	}
}

// TestResumeComputesAnInterruptedFinalEvaluation: a run interrupted at the start of its
// final scores, all steps done, resumes without training a step and ends with the final
// scores and the metrics log of the same run uninterrupted; a finished run still refuses
// such a resume.
func TestResumeComputesAnInterruptedFinalEvaluation(t *testing.T) {
	c := smallCorpus(t)
	opt := smallOptions(4)
	opt.EvalEvery, opt.Warmup = 4, 1
	whole := t.TempDir()
	want, err := (&Run{Model: smallModel(t, c, spec.L2, spec.Float32, 1), Corpus: c, Opt: opt, Out: whole, Log: quiet()}).Train(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &cancelOn{msg: "validation", cancel: cancel, at: make(chan time.Time, 1)} // the last validation, before the final scores
	sum, err := (&Run{Model: smallModel(t, c, spec.L2, spec.Float32, 1), Corpus: c, Opt: opt, Out: out, Log: slog.New(h)}).Train(ctx)
	if err != nil || !sum.Interrupted || sum.Steps != 4 || sum.TestBPC.Measured() {
		t.Fatalf("interrupted session: %v, %+v", err, sum)
	}
	d, err := OpenRun(out)
	if err != nil {
		t.Fatal(err)
	}
	r, step, err := d.Resume()
	if err != nil || step != 4 {
		t.Fatalf("resume at step %d: %v", step, err)
	}
	r.Corpus, r.Log = c, quiet()
	got, err := r.Train(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got.Interrupted || got.Steps != 4 || got.FinalValBPC != want.FinalValBPC || got.TestBPC != want.TestBPC || got.BestStep != want.BestStep {
		t.Errorf("resumed: interrupted %t, steps %d, val %v, test %v, best step %d; uninterrupted: val %v, test %v, best step %d",
			got.Interrupted, got.Steps, got.FinalValBPC, got.TestBPC, got.BestStep, want.FinalValBPC, want.TestBPC, want.BestStep)
	}
	m1, err := ReadMetrics(filepath.Join(whole, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	m2, err := ReadMetrics(filepath.Join(out, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(m2.Train) != len(m1.Train) || len(m2.Eval) != len(m1.Eval) || m2.Eval[len(m2.Eval)-1].ValLoss != m1.Eval[len(m1.Eval)-1].ValLoss {
		t.Errorf("metrics: %d train and %d eval rows, want %d and %d with the same last validation", len(m2.Train), len(m2.Eval), len(m1.Train), len(m1.Eval))
	}
	d, err = OpenRun(out)
	if err != nil {
		t.Fatal(err)
	}
	if r, _, err = d.Resume(); err != nil {
		t.Fatal(err)
	}
	r.Corpus, r.Log = c, quiet()
	if _, err := r.Train(context.Background()); err == nil || !strings.Contains(err.Error(), "leaves none to train") {
		t.Errorf("resume of the finished run: error %v, want it refused", err)
	}
}
