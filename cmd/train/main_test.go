package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lipformer/data"
	"lipformer/model"
	"lipformer/ngram"
	"lipformer/train"
)

func corpusFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "text.txt")
	text := strings.Repeat("It was the best of times, it was the worst of times. ", 80)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTrainThenResume(t *testing.T) {
	data, out := corpusFile(t), filepath.Join(t.TempDir(), "run")
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	args := []string{"-data", data, "-layers", "1", "-width", "16", "-heads", "2", "-ctx", "16", "-batch", "2",
		"-steps", "6", "-eval-every", "3", "-eval-bytes", "200", "-out", out, "-json", "-sample", "0", "-cpuprofile", prof}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("-cpuprofile %s: %v, %v; want a profile", prof, fi, err)
	}
	var sum train.Summary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil || sum.Steps != 6 {
		t.Fatalf("summary %q: %v", stdout.String(), err)
	}
	if len(sum.Baselines) != 3 || sum.Baselines[0].Order != 2 || sum.Baselines[2].Order != 5 || !(sum.Baselines[2].BPC > 0) {
		t.Errorf("summary baselines %+v, want the bigram, trigram and 5-gram bpc", sum.Baselines)
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"-resume", out, "-steps", "9", "-json", "-sample", "0"}, &stdout, &stderr); err != nil {
		t.Fatalf("resume: %v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil || sum.Steps != 9 {
		t.Fatalf("resumed summary %q: %v", stdout.String(), err)
	}
}

func TestBadFlagsGiveClearErrors(t *testing.T) {
	data := corpusFile(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-data", data, "-arch", "rnn"}, "arch"},
		{[]string{"-data", data, "-heads", "3"}, "heads"},
		{[]string{"-data", data, "-schedule", "linear"}, "linear"},
		{[]string{"-data", filepath.Join(t.TempDir(), "missing.txt")}, "missing.txt"},
		{[]string{"-data", data, "-fractions", "0.5,0.6"}, "split"},
		{[]string{"-resume", t.TempDir(), "-lr", "1"}, "-lr cannot change"},
		{[]string{"-resume", t.TempDir(), "-log-lipschitz", "5", "-tie=false"}, "-log-lipschitz, -tie cannot change"},
		{[]string{"-resume", t.TempDir()}, "ckpt.safetensors"},
	} {
		var stdout, stderr bytes.Buffer
		c.args = append(c.args, "-steps", "2")
		if !slices.Contains(c.args, "-resume") { // -out with -resume may only name the run itself
			c.args = append(c.args, "-out", filepath.Join(t.TempDir(), "run"))
		}
		err := run(context.Background(), c.args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one mentioning %q", c.args, err, c.want)
		}
	}
}

// TestReportShowsBaselines: the human summary names the n-gram baselines of the test split.
func TestReportShowsBaselines(t *testing.T) {
	sum := &train.Summary{Corpus: "opticks", Steps: 10, FinalValBPC: 3.6, ValBytes: 99, TestBPC: 3.519, TestBytes: 100,
		Baselines: []ngram.Result{{Order: 2, BPC: 3.51}, {Order: 3, BPC: 2.82}, {Order: 5, BPC: 2.2}}}
	var out bytes.Buffer
	if err := report(&out, &train.Run{Out: t.TempDir()}, sum, false, 0); err != nil {
		t.Fatal(err)
	}
	want := "n-gram baselines of the test split: bigram 3.5100, trigram 2.8200, 5-gram 2.2000\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("report:\n%s\nwant a line with %q", out.String(), want)
	}
}

// TestReportShowsTheCertificate: a summary with a certificate prints its constants, its
// logit range and its logit radius.
func TestReportShowsTheCertificate(t *testing.T) {
	sum := &train.Summary{Corpus: "opticks", Steps: 10, FinalValBPC: 3.6, ValBytes: 99,
		Certificate: &model.Certificate{N: 64, Inf: 3, Two: 2, Tok2: 10, TokenDiameter: 1.9, LogitRange: 19, TokenRadius: 0.99, LogitRadius: 9.9}}
	var out bytes.Buffer
	if err := report(&out, &train.Run{Out: t.TempDir()}, sum, false, 0); err != nil {
		t.Fatal(err)
	}
	want := "10 (token norm); certified logit range 19 (the token embedding's diameter 1.9) and radius 9.9"
	if !strings.Contains(out.String(), want) {
		t.Errorf("report:\n%s\nwant a line with %q", out.String(), want)
	}
}

// TestReportOneValidationFigure: the report prints one validation figure, labelled whole
// split or periodic subset; a corpus whose test part is its validation part is said so
// once, its figures printed once; a run without final scores shows its best periodic
// validation, labelled with the bytes it scored.
func TestReportOneValidationFigure(t *testing.T) {
	text := []byte(strings.Repeat("abcdefghij", 100))
	sep := &data.Corpus{Train: text[:800], Valid: text[800:900], Test: text[900:]}
	same := &data.Corpus{Train: text[:900], Valid: text[900:], Test: text[900:]}
	sum := &train.Summary{Corpus: "shakespeare", Steps: 10, FinalValBPC: 3.625, ValBytes: 100, TestBPC: 3.625, TestBytes: 100,
		FinalValAcc: 0.5, TestAcc: 0.5, BestValBPC: 3.5, BestStep: 8, Options: train.Options{EvalBytes: 50}}
	for _, c := range []struct {
		corpus     *data.Corpus
		want, not  []string
		bpcPrinted int
	}{
		{same, []string{"val bpc 3.6250, whole validation split (100 bytes); shakespeare has no separate test split: the test scores are these\n",
			"next-byte accuracy: 0.5000\n", "best.safetensors: step 8, the best periodic validation (periodic subset: the first 50 bytes of the validation split)"},
			[]string{"test bpc", "3.5000"}, 1},
		{sep, []string{"val bpc 3.6250, whole validation split (100 bytes); test bpc 3.6250, whole test split (100 bytes)\n",
			"next-byte accuracy: val 0.5000, test 0.5000\n"}, []string{"no separate test", "3.5000"}, 2},
	} {
		var out bytes.Buffer
		if err := report(&out, &train.Run{Out: t.TempDir(), Corpus: c.corpus}, sum, false, 0); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		for _, w := range c.want {
			if !strings.Contains(s, w) {
				t.Errorf("report:\n%s\nwant %q", s, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(s, w) {
				t.Errorf("report:\n%s\nhas %q", s, w)
			}
		}
		if n := strings.Count(s, "3.6250"); n != c.bpcPrinted {
			t.Errorf("report:\n%s\nprints 3.6250 %d times, want %d", s, n, c.bpcPrinted)
		}
	}
	stopped := &train.Summary{Corpus: "shakespeare", Steps: 10, FinalValBPC: train.Figure(math.NaN()), TestBPC: train.Figure(math.NaN()),
		BestValBPC: 3.5, BestStep: 8, NonFinite: true, Options: train.Options{EvalBytes: 0}}
	var out bytes.Buffer
	if err := report(&out, &train.Run{Out: t.TempDir(), Corpus: same}, stopped, false, 0); err != nil {
		t.Fatal(err)
	}
	want := "val bpc 3.5000 at step 8, the best periodic validation (whole validation split); stopped at a non-finite value: no whole-split score\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("report:\n%s\nwant %q", out.String(), want)
	}
}

// tinyRun trains a tiny model for steps steps into a new run directory and returns the
// corpus and the directory.
func tinyRun(t *testing.T, steps int) (string, string) {
	t.Helper()
	data, out := corpusFile(t), filepath.Join(t.TempDir(), "run")
	args := append(tinyArgs(data, out), "-steps", fmt.Sprint(steps), "-sample", "0")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	return data, out
}

// tinyArgs are the flags of a tiny, fast model on data, written to out.
func tinyArgs(data, out string) []string {
	return []string{"-data", data, "-layers", "1", "-width", "16", "-heads", "2", "-ctx", "16", "-batch", "2",
		"-eval-every", "3", "-eval-bytes", "200", "-out", out}
}

// TestResumeRefusesAnotherOut: -out with -resume must name the run's own directory; any
// other is refused before anything is written, as the run would not go there.
func TestResumeRefusesAnotherOut(t *testing.T) {
	_, out := tinyRun(t, 6)
	before, err := os.ReadFile(filepath.Join(out, train.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	var stdout, stderr bytes.Buffer
	err = run(context.Background(), []string{"-resume", out, "-out", elsewhere, "-steps", "9", "-sample", "0"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "-out "+elsewhere) || !strings.Contains(err.Error(), "own directory") {
		t.Errorf("-resume %s -out %s: error %v, want one refusing -out", out, elsewhere, err)
	}
	if after, _ := os.ReadFile(filepath.Join(out, train.MetricsFile)); !bytes.Equal(before, after) {
		t.Errorf("the refused resume changed %s", train.MetricsFile)
	}
	if _, err := os.Stat(elsewhere); err == nil {
		t.Errorf("the refused resume created %s", elsewhere)
	}
	if err := run(context.Background(), []string{"-resume", out, "-out", out + string(filepath.Separator), "-steps", "9", "-sample", "0"}, &stdout, &stderr); err != nil {
		t.Errorf("-resume with -out naming the run itself: %v", err)
	}
}

// TestResumeNeedsMoreSteps: resuming a finished run, or with -steps not above the step
// reached, is refused with a message saying what to give, and changes nothing.
func TestResumeNeedsMoreSteps(t *testing.T) {
	_, out := tinyRun(t, 6)
	files := func() [][]byte {
		var bs [][]byte
		for _, f := range []string{train.MetricsFile, train.SummaryFile, train.LatestFile} {
			b, err := os.ReadFile(filepath.Join(out, f))
			if err != nil {
				t.Fatal(err)
			}
			bs = append(bs, b)
		}
		return bs
	}
	before := files()
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, fmt.Sprintf("run %s finished at step 6; give -steps M > 6 to continue it", out)},
		{[]string{"-steps", "6"}, fmt.Sprintf("-steps 6: run %s is at step 6 already; -steps must exceed 6 to continue it", out)},
		{[]string{"-steps", "3"}, fmt.Sprintf("-steps 3: run %s is at step 6 already", out)},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"-resume", out, "-sample", "0"}, c.args...)
		if err := run(context.Background(), args, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", args, err, c.want)
		}
	}
	if after := files(); !slices.EqualFunc(before, after, bytes.Equal) {
		t.Errorf("a refused resume changed the run's files")
	}
}

// TestDivergedRunReport: a run that diverges before its first validation reports no
// scores it did not measure and names no checkpoint it did not save.
func TestDivergedRunReport(t *testing.T) {
	data, out := corpusFile(t), filepath.Join(t.TempDir(), "run")
	args := append(tinyArgs(data, out), "-lr", "1e3", "-clip", "0", "-schedule", "constant", "-warmup", "0", "-eval-every", "10",
		"-steps", "40", "-sample", "0")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, &stdout, &stderr)
	if !errors.Is(err, train.ErrNonFinite) {
		t.Fatalf("error %v, want ErrNonFinite\n%s", err, stderr.String())
	}
	if s := stdout.String(); strings.Contains(s, "(0 bytes)") || strings.Contains(s, "bpc 0.0000") || !strings.Contains(s, "no final val or test bpc") {
		t.Errorf("report:\n%s\nwant no bpc of 0 and no 0 bytes for scores that were not measured", s)
	}
	if _, statErr := os.Stat(filepath.Join(out, train.LatestFile)); statErr == nil || strings.Contains(err.Error(), train.LatestFile) {
		t.Errorf("error %q names %s (saved: %v)", err, train.LatestFile, statErr == nil)
	}
}

// TestInterruptedReport: a run interrupted before its last step is told to resume; one
// interrupted during its final evaluation, all steps done, that a resume computes its
// final scores.
func TestInterruptedReport(t *testing.T) {
	r := &train.Run{Out: "out/x"}
	for _, c := range []struct {
		steps int
		want  string
	}{{5, "interrupted: resume with -resume out/x"}, {10, "interrupted during the final evaluation, after all 10 steps: no final scores; -resume out/x computes them"}} {
		sum := &train.Summary{Interrupted: true, Steps: c.steps, Options: train.Options{Steps: 10}, TokensPerS: train.NotMeasured()}
		var out bytes.Buffer
		if err := report(&out, r, sum, false, 0); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("%d of 10 steps: report\n%s\nwant %q", c.steps, out.String(), c.want)
		}
	}
}

// TestResumeFinishesAnInterruptedFinalEvaluation: -resume of a run whose summary says it
// was interrupted after its last step (during its final evaluation) trains no step and
// prints the final scores, with the validation of the last step logged once.
func TestResumeFinishesAnInterruptedFinalEvaluation(t *testing.T) {
	_, out := tinyRun(t, 6)
	path := filepath.Join(out, train.SummaryFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.Replace(b, []byte(`"interrupted": false`), []byte(`"interrupted": true`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-resume", out, "-sample", "0"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if s := stdout.String(); !strings.Contains(s, "test bpc") || !strings.Contains(stderr.String(), "computing the final evaluation") {
		t.Errorf("stdout:\n%s\nstderr:\n%s\nwant the final scores", s, stderr.String())
	}
	m, err := train.ReadMetrics(filepath.Join(out, train.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Train) != 6 || len(m.Eval) != 3 || m.Eval[2].Step != 6 {
		t.Errorf("%d train rows, eval rows %+v; want 6 and validations at steps 0, 3 and 6", len(m.Train), m.Eval)
	}
}
