package train

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lipformer/data"
	"lipformer/model"
	"lipformer/ngram"
	"lipformer/spec"
)

// smallCorpus is a few KB of real-looking text with a 30-odd byte vocabulary.
func smallCorpus(t *testing.T) *data.Corpus {
	t.Helper()
	text := strings.Repeat("the quick brown fox jumps over the lazy dog. a stitch in time saves nine. ", 60)
	path := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := data.Load(context.Background(), path, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func smallModel(t *testing.T, c *data.Corpus, arch spec.Arch, dtype spec.Dtype, seed uint64) *model.Model {
	t.Helper()
	cfg := model.Config{Arch: arch, Layers: 2, Heads: 2, Width: 16, Context: 16, Vocab: c.Vocab.Size(), Norm: spec.PreLN, LipC: 0.9, Dtype: dtype, Std: 0.02}
	m, err := model.New(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func smallOptions(steps int) Options {
	o := DefaultOptions()
	o.Steps, o.Batch, o.LR, o.MinLR, o.Warmup, o.EvalEvery, o.EvalBytes = steps, 4, 3e-3, 3e-4, 5, 10, 500
	return o
}

// TestSmokeRun: 30 steps on a few KB of text; the loss falls, everything is finite, and the
// metrics, checkpoints and summary are written.
func TestSmokeRun(t *testing.T) {
	c := smallCorpus(t)
	for _, arch := range spec.Archs {
		t.Run(arch.String(), func(t *testing.T) {
			out := t.TempDir()
			r := &Run{Model: smallModel(t, c, arch, spec.Float32, 1), Corpus: c, Opt: smallOptions(30), Out: out, Log: quiet()}
			sum, err := r.Train(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			m, err := ReadMetrics(filepath.Join(out, MetricsFile))
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Train) != 30 || len(m.Eval) != 4 || m.Eval[0].Step != 0 {
				t.Fatalf("%d train rows and %d eval rows (the first at step %d), want 30 and 4, the first of the initial weights at step 0", len(m.Train), len(m.Eval), m.Eval[0].Step)
			}
			first, last := mean(m.Train[:5]), mean(m.Train[25:])
			if !(last < first-0.3) {
				t.Errorf("loss did not fall: first 5 steps %.3f, last 5 %.3f", first, last)
			}
			for _, v := range []Figure{sum.FinalValBPC, sum.TestBPC, sum.BestValBPC} {
				if !finite(float64(v)) || v <= 0 {
					t.Errorf("summary has a non-finite or non-positive bpc: %+v", sum)
				}
			}
			want, err := ngram.Baselines(c.Train, c.Test, c.Vocab.Bytes(), []int{2, 3, 5})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sum.Baselines, want) {
				t.Errorf("summary baselines %v, want the test-split bpc %v", sum.Baselines, want)
			}
			if sum.TestBytes != len(c.Test)-1 || sum.ValBytes != len(c.Valid)-1 {
				t.Errorf("scored %d test and %d valid bytes, want %d and %d", sum.TestBytes, sum.ValBytes, len(c.Test)-1, len(c.Valid)-1)
			}
			for _, f := range []string{LatestFile, BestFile, SummaryFile} {
				if _, err := os.Stat(filepath.Join(out, f)); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestMuonTrains: Muon for the blocks' matrices (-muon) trains every architecture: the loss
// falls, and the run is not AdamW's.
func TestMuonTrains(t *testing.T) {
	c := smallCorpus(t)
	for _, arch := range []spec.Arch{spec.DP, spec.InvertibleL2} {
		t.Run(arch.String(), func(t *testing.T) {
			losses := map[float64][]TrainRow{}
			for _, muon := range []float64{0, 5} {
				out := t.TempDir()
				o := smallOptions(30)
				o.Muon = muon
				r := &Run{Model: smallModel(t, c, arch, spec.Float32, 1), Corpus: c, Opt: o, Out: out, Log: quiet()}
				if _, err := r.Train(context.Background()); err != nil {
					t.Fatal(err)
				}
				m, err := ReadMetrics(filepath.Join(out, MetricsFile))
				if err != nil {
					t.Fatal(err)
				}
				losses[muon] = m.Train
			}
			first, last := mean(losses[5][:5]), mean(losses[5][25:])
			if !(last < first-0.3) {
				t.Errorf("with Muon the loss did not fall: first 5 steps %.3f, last 5 %.3f", first, last)
			}
			if losses[5][10].Loss == losses[0][10].Loss {
				t.Errorf("step 10's loss %.6f is AdamW's: Muon did not run", losses[5][10].Loss)
			}
		})
	}
}

func mean(rows []TrainRow) float64 {
	var s float64
	for _, r := range rows {
		s += r.Loss
	}
	return s / float64(len(rows))
}

// TestExactResume: N steps, stop, resume, M more steps gives the same losses as N+M steps
// in one run, with dropout on; for invertible-l2 the power-iteration vectors are resumed too.
// With Muon (invertible-l2 -muon) its momentum is resumed too.
func TestExactResume(t *testing.T) {
	for _, arch := range []spec.Arch{spec.L2, spec.InvertibleL2} {
		t.Run(arch.String(), func(t *testing.T) { testExactResume(t, arch, 0) })
	}
	t.Run("invertible-l2 with Muon", func(t *testing.T) { testExactResume(t, spec.InvertibleL2, 5) })
}

func testExactResume(t *testing.T, arch spec.Arch, muon float64) {
	c := smallCorpus(t)
	run := func(out string, steps int, resume bool) []TrainRow {
		o := smallOptions(steps)
		o.Muon = muon
		o.Schedule = "constant" // the same learning rates whatever the total
		o.FinalPowerIters = 0   // a finished run continues from its refined estimates otherwise
		r := &Run{Corpus: c, Opt: o, Out: out, Log: quiet()}
		if resume {
			var err error
			if r.Model, r.Resume, err = model.Load(filepath.Join(out, LatestFile)); err != nil {
				t.Fatal(err)
			}
		} else {
			cfg := smallModel(t, c, arch, spec.Float64, 3).Cfg
			cfg.Dropout = 0.1
			var err error
			if r.Model, err = model.New(cfg, 3); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := r.Train(context.Background()); err != nil {
			t.Fatal(err)
		}
		m, err := ReadMetrics(filepath.Join(out, MetricsFile))
		if err != nil {
			t.Fatal(err)
		}
		return m.Train
	}
	whole := run(t.TempDir(), 14, false)
	split := t.TempDir()
	run(split, 6, false)
	resumed := run(split, 14, true)
	if len(resumed) != 14 || len(whole) != 14 {
		t.Fatalf("%d resumed rows, %d whole rows; want 14", len(resumed), len(whole))
	}
	for i := range whole {
		if d := math.Abs(whole[i].Loss - resumed[i].Loss); d > 1e-6 {
			t.Errorf("step %d: loss %.12f in one run, %.12f resumed", i, whole[i].Loss, resumed[i].Loss)
		}
	}
}

func TestFreshRunRefusesAnOldOutputDirectory(t *testing.T) {
	c := smallCorpus(t)
	out := t.TempDir()
	o := smallOptions(2)
	o.Warmup = 0
	r := &Run{Model: smallModel(t, c, spec.DP, spec.Float32, 1), Corpus: c, Opt: o, Out: out, Log: quiet()}
	if _, err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Train(context.Background()); err == nil || !strings.Contains(err.Error(), "already holds a run") {
		t.Fatalf("second fresh run in the same directory: %v", err)
	}
}

func TestNonFiniteStopsWithTheLastGoodCheckpoint(t *testing.T) {
	c := smallCorpus(t)
	out := t.TempDir()
	o := smallOptions(40)
	o.LR, o.MinLR, o.Clip, o.Schedule, o.Warmup = 1e30, 0, 0, "constant", 0
	r := &Run{Model: smallModel(t, c, spec.DP, spec.Float32, 1), Corpus: c, Opt: o, Out: out, Log: quiet()}
	sum, err := r.Train(context.Background())
	if !errors.Is(err, ErrNonFinite) {
		t.Fatalf("a learning rate of 1e30 gave %v, want ErrNonFinite", err)
	}
	if !sum.NonFinite || sum.Stability.FirstNonFiniteStep < 0 {
		t.Errorf("summary does not record the non-finite step: %+v", sum.Stability)
	}
	if _, err := os.Stat(filepath.Join(out, SummaryFile)); err != nil {
		t.Error(err)
	}
}

func TestInterruptSavesACheckpoint(t *testing.T) {
	c := smallCorpus(t)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &Run{Model: smallModel(t, c, spec.L2, spec.Float32, 1), Corpus: c, Opt: smallOptions(20), Out: out, Log: quiet()}
	sum, err := r.Train(ctx)
	if err != nil || !sum.Interrupted {
		t.Fatalf("interrupted run: %+v, %v", sum, err)
	}
	_, ck, err := model.Load(filepath.Join(out, LatestFile))
	if err != nil {
		t.Fatal(err)
	}
	if step, _ := ck.MetaInt(MetaStep); step != 0 {
		t.Errorf("checkpoint at step %d, want 0", step)
	}
}

func TestOptionsErrorsNameTheOption(t *testing.T) {
	o := DefaultOptions()
	o.Steps, o.Schedule, o.Beta2 = 0, "linear", 1.5
	err := o.Validate()
	for _, want := range []string{"steps", "linear", "beta2"} {
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), want) {
			t.Errorf("error %v does not name %q", err, want)
		}
	}
}

// TestElapsedTimeContinuesAcrossResume: a resumed run's elapsed times and summary count the
// time of the sessions before it.
func TestElapsedTimeContinuesAcrossResume(t *testing.T) {
	c := smallCorpus(t)
	out := t.TempDir()
	o := smallOptions(8)
	o.Schedule, o.Warmup = "constant", 0
	first := &Run{Model: smallModel(t, c, spec.DP, spec.Float32, 1), Corpus: c, Opt: o, Out: out, Log: quiet()}
	if _, err := first.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	m, ck, err := model.Load(filepath.Join(out, LatestFile))
	if err != nil {
		t.Fatal(err)
	}
	o.Steps = 12
	sum, err := (&Run{Model: m, Resume: ck, Corpus: c, Opt: o, Out: out, Log: quiet()}).Train(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ReadMetrics(filepath.Join(out, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(rows.Train); i++ {
		if rows.Train[i].ElapsedS < rows.Train[i-1].ElapsedS {
			t.Fatalf("elapsed time goes back at step %d: %v after %v", i, rows.Train[i].ElapsedS, rows.Train[i-1].ElapsedS)
		}
	}
	if sum.Seconds < rows.Train[7].ElapsedS {
		t.Errorf("summary seconds %v below the first session's %v", sum.Seconds, rows.Train[7].ElapsedS)
	}
}

// TestSummaryCertifiesABoundedModel: the summary of a model bounded end to end holds its
// certificate, at most K up to the power iterations, without Run.Certify; that of another
// model only with it.
func TestSummaryCertifiesABoundedModel(t *testing.T) {
	c := smallCorpus(t)
	cfg := model.Config{Arch: spec.InvertibleL2, Layers: 1, Heads: 2, Width: 16, Context: 16, Vocab: c.Vocab.Size(), Norm: spec.NoLN, LipC: 0.5,
		Dtype: spec.Float32, Std: 0.02, EmbedStd: 1, LipK: 10}.WithCertifiedRecipe()
	bounded, err := model.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		m       *model.Model
		certify bool
		want    bool
	}{{bounded, false, true}, {smallModel(t, c, spec.ContractiveL2, spec.Float32, 1), false, false}, {smallModel(t, c, spec.ContractiveL2, spec.Float32, 1), true, true}} {
		run := &Run{Model: r.m, Corpus: c, Opt: smallOptions(6), Out: t.TempDir(), Log: quiet(), Certify: r.certify}
		sum, err := run.Train(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := sum.Certificate != nil; got != r.want {
			t.Fatalf("%s (lip-k %g), Certify %v: certificate %v, want one: %v", r.m.Cfg.Arch, r.m.Cfg.LipK, r.certify, sum.Certificate, r.want)
		}
		if r.m.Cfg.LipK > 0 && !(sum.Certificate.Tok2 > 0 && sum.Certificate.Tok2 < 10.5) {
			t.Errorf("certified %v, want at most K = 10 up to the power iterations", sum.Certificate.Tok2)
		}
	}
}
