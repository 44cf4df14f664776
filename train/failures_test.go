package train

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"lipformer/data"
	"lipformer/model"
	"lipformer/ops"
	"lipformer/spec"
)

// divergingOptions make a small run diverge within a few steps: a learning rate of 1e3
// without clipping or warm-up, validating every evalEvery steps.
func divergingOptions(evalEvery int) Options {
	o := smallOptions(40)
	o.LR, o.MinLR, o.Clip, o.Schedule, o.Warmup, o.EvalEvery = 1e3, 0, 0, "constant", 0, evalEvery
	return o
}

// summaryFields reads out/summary.json as JSON fields.
func summaryFields(t *testing.T, out string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	return fields
}

// wantUnmeasured reports the fields of a summary that hold a value although they were not
// measured: they must be null or absent.
func wantUnmeasured(t *testing.T, fields map[string]any, names ...string) {
	t.Helper()
	for _, name := range names {
		if v, ok := fields[name]; ok && v != nil {
			t.Errorf("summary.json %q = %v for a figure that was not measured, want null or absent", name, v)
		}
	}
}

// exists reports whether path exists.
func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// dirFiles reads every file of dir but the lock file.
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if e.Name() == LockFile {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

// TestDivergenceBeforeTheFirstCheckpointSaysThereIsNone: a run that diverges before its
// first validation has no checkpoint, and the error says so instead of naming a file that
// does not exist; the summary leaves the scores it never measured null.
func TestDivergenceBeforeTheFirstCheckpointSaysThereIsNone(t *testing.T) {
	c := smallCorpus(t)
	out := t.TempDir()
	r := &Run{Model: smallModel(t, c, spec.L2, spec.Float32, 1), Corpus: c, Opt: divergingOptions(10), Out: out, Log: quiet()}
	sum, err := r.Train(context.Background())
	if !errors.Is(err, ErrNonFinite) || sum == nil {
		t.Fatalf("a learning rate of 1e3 gave %v, want ErrNonFinite and a summary", err)
	}
	if sum.Steps >= 10 {
		t.Fatalf("diverged after %d steps, this test needs a divergence before the first validation at step 10", sum.Steps)
	}
	latest := filepath.Join(out, LatestFile)
	if exists(t, latest) {
		t.Fatalf("%s exists although no validation ran", latest)
	}
	if strings.Contains(err.Error(), latest) || !strings.Contains(err.Error(), "no good checkpoint") {
		t.Errorf("error %q, want one saying that no good checkpoint was saved", err)
	}
	wantUnmeasured(t, summaryFields(t, out), "final_val_bpc", "test_bpc", "best_val_bpc", "val_bytes", "test_bytes")
	if sum.BestStep != -1 {
		t.Errorf("summary best step %d, want -1", sum.BestStep)
	}
}

// TestNonFiniteValidationSavesNoCheckpoint: a validation with a non-finite loss stops the
// run without overwriting the last good checkpoint; every checkpoint left evaluates to a
// finite loss, the error names only files that exist, and the summary gives the best
// validation that best.safetensors holds.
func TestNonFiniteValidationSavesNoCheckpoint(t *testing.T) {
	c := smallCorpus(t)
	out := t.TempDir()
	r := &Run{Model: smallModel(t, c, spec.L2, spec.Float32, 1), Corpus: c, Opt: divergingOptions(2), Out: out, Log: quiet()}
	sum, err := r.Train(context.Background())
	if !errors.Is(err, ErrNonFinite) || sum == nil {
		t.Fatalf("a learning rate of 1e3 gave %v, want ErrNonFinite and a summary", err)
	}
	m, err2 := ReadMetrics(filepath.Join(out, MetricsFile))
	if err2 != nil {
		t.Fatal(err2)
	}
	badEval := -1
	for _, e := range m.Eval {
		if !finite(e.ValLoss) {
			badEval = e.Step
			break
		}
	}
	if badEval < 0 {
		t.Fatalf("no validation was non-finite (%+v); this test needs one", m.Eval)
	}
	val, err2 := c.Vocab.EncodeCompact(c.Valid)
	if err2 != nil {
		t.Fatal(err2)
	}
	steps := map[string]int{}
	for _, name := range []string{LatestFile, BestFile} {
		path := filepath.Join(out, name)
		if !exists(t, path) {
			if strings.Contains(err.Error(), path) {
				t.Errorf("error %q names %s, which does not exist", err, path)
			}
			continue
		}
		mdl, ck, err := model.Load(path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		step, err := ck.MetaInt(MetaStep)
		if err != nil {
			t.Fatal(err)
		}
		steps[name] = step
		p, err := mdl.NewProgram(model.Eval, 4)
		if err != nil {
			t.Fatal(err)
		}
		loss, _, err := Evaluate(context.Background(), p, val)
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !finite(loss) || step >= badEval {
			t.Errorf("%s (step %d) evaluates to a loss of %v; the validation at step %d was not finite", name, step, loss, badEval)
		}
	}
	if s, ok := steps[LatestFile]; !ok || !strings.Contains(err.Error(), filepath.Join(out, LatestFile)) {
		t.Errorf("error %q, want one naming the last good checkpoint (at step %d)", err, s)
	}
	best, ok := steps[BestFile]
	if !ok {
		t.Fatalf("no %s; the validation at step 2 was finite", BestFile)
	}
	if sum.BestStep != best || !finite(float64(sum.BestValBPC)) {
		t.Errorf("summary best step %d, bpc %v; want step %d, the one %s holds", sum.BestStep, sum.BestValBPC, best, BestFile)
	}
	fields := summaryFields(t, out)
	if got, _ := fields["best_step"].(float64); int(got) != best {
		t.Errorf("summary.json best_step %v, want %d", fields["best_step"], best)
	}
	wantUnmeasured(t, fields, "final_val_bpc", "test_bpc")
}

// TestInterruptedRunLeavesScoresUnmeasured: an interrupted run's summary.json has no final
// scores (null, not 0), and reading it back gives NaN, not measured.
func TestInterruptedRunLeavesScoresUnmeasured(t *testing.T) {
	c := smallCorpus(t)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &Run{Model: smallModel(t, c, spec.DP, spec.Float32, 1), Corpus: c, Opt: smallOptions(20), Out: out, Log: quiet()}
	if sum, err := r.Train(ctx); err != nil || !sum.Interrupted {
		t.Fatalf("interrupted run: %+v, %v", sum, err)
	}
	wantUnmeasured(t, summaryFields(t, out), "final_val_bpc", "test_bpc", "best_val_bpc", "tokens_per_s", "val_bytes", "test_bytes")
	b, err := os.ReadFile(filepath.Join(out, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]float64{"final val": float64(back.FinalValBPC), "test": float64(back.TestBPC), "best val": float64(back.BestValBPC)} {
		if !math.IsNaN(v) {
			t.Errorf("%s bpc read back as %v, want NaN (not measured)", name, v)
		}
	}
}

// finishedRun trains a small run of steps steps in a new directory and returns it.
func finishedRun(t *testing.T, c *data.Corpus, steps int) string {
	t.Helper()
	out := t.TempDir()
	o := smallOptions(steps)
	o.Warmup = 0
	if _, err := (&Run{Model: smallModel(t, c, spec.DP, spec.Float32, 1), Corpus: c, Opt: o, Out: out, Log: quiet()}).Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out
}

// resumeRun resumes the run in out for steps steps in all.
func resumeRun(t *testing.T, c *data.Corpus, out string, steps int, log *slog.Logger) (*Summary, error) {
	t.Helper()
	m, ck, err := model.Load(filepath.Join(out, LatestFile))
	if err != nil {
		t.Fatal(err)
	}
	o, err := TrainOptions(ck)
	if err != nil {
		t.Fatal(err)
	}
	o.Steps = steps
	return (&Run{Model: m, Resume: ck, Corpus: c, Opt: o, Out: out, Log: log}).Train(context.Background())
}

// TestResumeWithNoStepLeftIsRefused: resuming a finished run with its own number of steps,
// or with fewer, is an error naming the run and its step, and changes no file of it.
func TestResumeWithNoStepLeftIsRefused(t *testing.T) {
	c := smallCorpus(t)
	out := finishedRun(t, c, 6)
	before := dirFiles(t, out)
	for _, steps := range []int{6, 3} {
		_, err := resumeRun(t, c, out, steps, quiet())
		if err == nil || !strings.Contains(err.Error(), out) || !strings.Contains(err.Error(), "step 6") {
			t.Errorf("resume for %d steps of a run at step 6: error %v, want one naming %s and step 6", steps, err, out)
		}
		if after := dirFiles(t, out); !maps.EqualFunc(before, after, bytes.Equal) {
			t.Errorf("resume for %d steps changed the run's files: %v before, %v after", steps, slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(after)))
		}
	}
}

// TestReadMetricsReportsATornLastRow: a last line without its newline that is not a
// complete row is reported as torn; a bad line elsewhere is reported as before.
func TestReadMetricsReportsATornLastRow(t *testing.T) {
	good := `{"kind":"train","step":1,"loss":1,"bpc":1.4,"lr":1,"grad_norm":1,"tokens_per_s":1,"elapsed_s":1}`
	torn := `{"kind":"train","step":2,"loss":`
	for _, c := range []struct {
		name, text string
		torn       bool
	}{
		{"torn last line", good + "\n" + good + "\n" + torn, true},
		{"bad line with its newline", good + "\n" + good + "\n" + torn + "\n", false},
		{"bad line inside", good + "\n" + good + "\n" + torn + "\n" + good, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), MetricsFile)
			if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadMetrics(path)
			if err == nil || !strings.Contains(err.Error(), path+" line 3") ||
				strings.Contains(strings.ReplaceAll(err.Error(), path, ""), "torn") != c.torn { // the path holds the test's name
				t.Errorf("error %v, want one naming %s line 3, torn %t", err, path, c.torn)
			}
		})
	}
	path := filepath.Join(t.TempDir(), MetricsFile)
	if err := os.WriteFile(path, []byte(good+"\n"+good), 0o644); err != nil {
		t.Fatal(err)
	}
	if m, err := ReadMetrics(path); err != nil || len(m.Train) != 2 {
		t.Errorf("a complete last row without its newline: %d rows, %v; want 2 rows", len(m.Train), err)
	}
}

// TestResumeRepairsATornLastRow: a metrics log whose last row a full disk cut short is
// truncated after its last complete row on resume, with a warning giving the bytes
// removed, and the run continues with a log of every step once.
func TestResumeRepairsATornLastRow(t *testing.T) {
	c := smallCorpus(t)
	out := finishedRun(t, c, 6)
	path := filepath.Join(out, MetricsFile)
	torn := `{"kind":"train","step":6,"loss":2.5,"bp`
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(torn); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	if _, err := resumeRun(t, c, out, 9, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatalf("resume after a torn row: %v", err)
	}
	if want := "bytes_removed=" + strconv.Itoa(len(torn)); !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), want) {
		t.Errorf("log:\n%s\nwant a warning with %s", logs.String(), want)
	}
	m, err := ReadMetrics(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range m.Train {
		if row.Step != i {
			t.Fatalf("train row %d is of step %d; want every step of 0..8 once", i, row.Step)
		}
	}
	if len(m.Train) != 9 {
		t.Errorf("%d train rows, want 9", len(m.Train))
	}
}

// TestStartRemovesStaleTemporaries: a new run and a resumed one remove the temporary files
// that interrupted writes of the run directory's files left, and log it; other files stay.
func TestStartRemovesStaleTemporaries(t *testing.T) {
	c := smallCorpus(t)
	out := t.TempDir()
	stale := []string{".ckpt.safetensors.123.partial", ".best.safetensors.4567.partial", ".summary.json.89.partial", ".metrics.jsonl.1.partial"}
	others := []string{".notes.txt.5.partial", "ckpt.safetensors.partial", ".ckpt.safetensors.x1.partial", "notes.txt"}
	write := func(names []string) {
		for _, name := range names {
			if err := os.WriteFile(filepath.Join(out, name), bytes.Repeat([]byte{1}, 100), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(logs string) {
		t.Helper()
		for _, name := range stale {
			if exists(t, filepath.Join(out, name)) {
				t.Errorf("stale temporary %s is still there", name)
			}
			if !strings.Contains(logs, name) {
				t.Errorf("log:\n%s\nwant it to name the removed %s", logs, name)
			}
		}
		for _, name := range others {
			if !exists(t, filepath.Join(out, name)) {
				t.Errorf("%s, not a temporary of a run file, was removed", name)
			}
		}
	}
	write(append(stale, others...))
	var logs bytes.Buffer
	o := smallOptions(4)
	o.Warmup = 0
	r := &Run{Model: smallModel(t, c, spec.DP, spec.Float32, 1), Corpus: c, Opt: o, Out: out, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	if _, err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	check(logs.String())
	write(stale)
	logs.Reset()
	if _, err := resumeRun(t, c, out, 6, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatal(err)
	}
	check(logs.String())
}

// TestOverflowInsideTheGraphIsADivergence: weights that overflow make a contractive layer's
// bound non-finite, which its op refuses inside Gorgonia's VM; the run ends through the
// divergence report (an error wrapping ErrNonFinite, a summary marked non-finite), not with
// the VM's error alone.
func TestOverflowInsideTheGraphIsADivergence(t *testing.T) {
	c := smallCorpus(t)
	m := smallModel(t, c, spec.ContractiveL2, spec.Float32, 1)
	o := smallOptions(20)
	o.LR, o.MinLR, o.Warmup = 1e30, 1e29, 0
	r := &Run{Model: m, Corpus: c, Opt: o, Out: t.TempDir(), Log: quiet()}
	sum, err := r.Train(context.Background())
	if !errors.Is(err, ErrNonFinite) || !errors.Is(err, ops.ErrNonFinite) || sum == nil || !sum.NonFinite {
		t.Fatalf("a learning rate of 1e30 gave %v (summary %v), want ErrNonFinite from inside the graph and a non-finite summary", err, sum)
	}
}
