package train

import (
	"bytes"
	"context"
	"lipformer/spec"
	"log/slog"
	"strings"
	"testing"
)

// TestRunLogsAnEstimate: a run logs, after its first steps, an estimate of its time to
// the end that says it is one and what it was measured on, and again before each
// validation; a session of too few steps to measure logs none.
func TestRunLogsAnEstimate(t *testing.T) {
	c := smallCorpus(t)
	for _, s := range []struct{ steps, want int }{
		{estimateSteps + 5, 1},  // validations at 10 and 20 come before it
		{estimateSteps + 15, 2}, // and the one at 30 after it
		{estimateSteps, 0},      // the first step and 19 measured
	} {
		var logs bytes.Buffer
		r := &Run{Model: smallModel(t, c, spec.DP, spec.Float32, 1), Corpus: c, Opt: smallOptions(s.steps), Out: t.TempDir(),
			Log: slog.New(slog.NewTextHandler(&logs, nil))}
		if _, err := r.Train(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := strings.Count(logs.String(), "estimated time to the end of the run")
		if got != s.want || s.want > 0 && (!strings.Contains(logs.String(), "an estimate") || !strings.Contains(logs.String(), "ms a step measured over steps 2-21")) {
			t.Errorf("%d steps: %d estimates, want %d, in\n%s", s.steps, got, s.want, logs.String())
		}
	}
}

// TestEvalBytesLeft: the validations left after a step and the final scores.
func TestEvalBytesLeft(t *testing.T) {
	tr := &trainer[float32]{Run: &Run{Opt: Options{Steps: 1000, EvalEvery: 250, EvalBytes: 100}}}
	// validations at 250, 500, 750 and at the end (1000), then the whole splits
	if got, want := tr.evalBytesLeft(11, 5000, 4000), 4*100+5000+4000; got != want {
		t.Errorf("%d bytes, want %d", got, want)
	}
	tr.Opt.EvalBytes = 0
	if got, want := tr.evalBytesLeft(600, 5000, 4000), 2*5000+5000+4000; got != want {
		t.Errorf("whole-split validations: %d bytes, want %d", got, want)
	}
}
