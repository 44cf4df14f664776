package train

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"lipformer/spec"
)

// fakeClock is a clock that reads step later at every call.
func fakeClock(step time.Duration) func() time.Time {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		now = now.Add(step)
		return now
	}
}

// lines are the log lines of buf whose message is msg.
func lines(buf *bytes.Buffer, msg string) []string {
	var out []string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, "msg="+msg+" ") {
			out = append(out, l)
		}
	}
	return out
}

// TestEvaluationProgressLines: without a bar, an evaluation logs a line every Every of
// the clock with the batches done, the time taken and the time left at that rate; with a
// bar it logs none and draws the bar; with Every 0 it shows nothing.
func TestEvaluationProgressLines(t *testing.T) {
	var log bytes.Buffer
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	r := Reporter{Log: slog.New(slog.NewTextHandler(&log, nil)), Every: 3 * time.Second, Now: now}
	ev := r.Evaluation("final validation")
	for done := 1; done <= 10; done++ {
		clock = clock.Add(time.Second) // a batch takes a second
		ev(done, 10)
	}
	got := lines(&log, "evaluating")
	want := []string{`batches=3/10 elapsed=3s left=7s`, `batches=6/10 elapsed=6s left=4s`, `batches=9/10 elapsed=9s left=1s`}
	if len(got) != len(want) {
		t.Fatalf("lines:\n%s\nwant %d", log.String(), len(want))
	}
	for i, l := range got {
		if !strings.Contains(l, `what="final validation" `+want[i]) {
			t.Errorf("line %d: %s, want it to hold %s", i, l, want[i])
		}
	}
	for _, quiet := range []Reporter{{Log: r.Log, Every: 0, Now: now}, {Log: r.Log, Every: -time.Second, Now: now}, {Every: time.Second, Now: now}} {
		log.Reset()
		ev := quiet.Evaluation("x")
		for done := 1; done <= 10; done++ {
			clock = clock.Add(time.Second)
			ev(done, 10)
		}
		if log.Len() > 0 {
			t.Errorf("every %v: logged %q, want nothing", quiet.Every, log.String())
		}
	}
	var bar bytes.Buffer
	log.Reset()
	ev = Reporter{Bar: &bar, Log: r.Log, Every: time.Second, Now: now}.Evaluation("x")
	for done := 1; done <= 10; done++ {
		clock = clock.Add(time.Second)
		ev(done, 10)
	}
	if log.Len() > 0 || bar.Len() == 0 {
		t.Errorf("with a bar: logged %q and drew %d bytes, want no line and a bar", log.String(), bar.Len())
	}
}

var progressLine = regexp.MustCompile(`msg=progress step=(\d+)/40 loss=\d+\.\d{4} ms_per_step=\d+\.\d tokens_per_s=\d+ elapsed=\S+ left=\S+`)

// TestTrainingProgressLines: a run without a bar logs progress lines at the interval of its
// clock, each with the step, the loss, ms per step, tokens per second, the time elapsed and
// the time left, at increasing steps; with ProgressEvery < 0 it logs none, and the metrics
// log is the same either way.
func TestTrainingProgressLines(t *testing.T) {
	c := smallCorpus(t)
	run := func(every time.Duration) (*bytes.Buffer, string) {
		var log bytes.Buffer
		out := t.TempDir()
		r := &Run{Model: smallModel(t, c, spec.L2, spec.Float32, 1), Corpus: c, Opt: smallOptions(40), Out: out,
			Log: slog.New(slog.NewTextHandler(&log, nil)), ProgressEvery: every, Clock: fakeClock(time.Second)}
		if _, err := r.Train(context.Background()); err != nil {
			t.Fatal(err)
		}
		return &log, out
	}
	log, out := run(10 * time.Second)
	got := lines(log, "progress")
	if len(got) < 3 {
		t.Fatalf("%d progress lines in\n%s\nwant one every 10 s of a clock that ticks a second a reading", len(got), log.String())
	}
	last := 0
	for _, l := range got {
		m := progressLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line %q lacks a field", l)
		}
		step, _ := strconv.Atoi(m[1])
		if step <= last {
			t.Errorf("line at step %d after one at step %d", step, last)
		}
		last = step
	}
	quiet, quietOut := run(-1)
	if n := len(lines(quiet, "progress")) + len(lines(quiet, "evaluating")); n > 0 {
		t.Errorf("ProgressEvery -1: %d progress lines", n)
	}
	m1, err := ReadMetrics(filepath.Join(out, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	m2, err := ReadMetrics(filepath.Join(quietOut, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(m1.Train) != 40 || len(m2.Train) != 40 || len(m1.Eval) != len(m2.Eval) {
		t.Errorf("metrics: %d and %d train rows, %d and %d eval rows; want 40 each and the same validations", len(m1.Train), len(m2.Train), len(m1.Eval), len(m2.Eval))
	}
}
