package model

import (
	"strconv"
	"strings"
	"testing"
)

// wantError fails unless err is an error whose message holds want.
func wantError(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: error %v, want one saying %q", what, err, want)
	}
}

// TestProgramLossBeforeARun: the loss of a training or evaluation program that has not
// run is an error, not 0; after a run it is the run's loss.
func TestProgramLossBeforeARun(t *testing.T) {
	m, err := New(tiny("l2"), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{Train, Eval} {
		p := mustProgram(t, m, mode, 2)
		fill(p, 1, m.Cfg.Vocab)
		loss, err := p.Loss()
		wantError(t, mode.String()+" program before a run", err, "no run yet")
		if loss != 0 {
			t.Errorf("%s program before a run: loss %v with the error, want 0", mode, loss)
		}
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		if loss, err := p.Loss(); err != nil || !(loss > 0) {
			t.Errorf("%s program after a run: loss %v, error %v; want a positive loss", mode, loss, err)
		}
	}
}

// TestProgramHasNoLossOrLogitsOfAnotherMode: a sampling program has no loss; a training
// or evaluation program has no logits, and says so instead of panicking, after a run as
// before one; only a training program has gradients.
func TestProgramHasNoLossOrLogitsOfAnotherMode(t *testing.T) {
	m, err := New(tiny("l2"), 1)
	if err != nil {
		t.Fatal(err)
	}
	sp := mustProgram(t, m, Sample, 1)
	fill(sp, 1, m.Cfg.Vocab)
	if err := sp.Run(); err != nil {
		t.Fatal(err)
	}
	_, err = sp.Loss()
	wantError(t, "sampling program", err, "a sampling program has no loss")
	_, err = sp.Grad(0)
	wantError(t, "sampling program", err, "a sampling program has no gradients")
	for _, c := range []struct {
		mode Mode
		want string
	}{{Train, "a training program has no logits"}, {Eval, "an evaluation program has no logits"}} {
		p := mustProgram(t, m, c.mode, 1)
		fill(p, 1, m.Cfg.Vocab)
		_, err := p.Logits(0)
		wantError(t, c.mode.String()+" program before a run", err, c.want)
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		logits, err := p.Logits(0)
		wantError(t, c.mode.String()+" program after a run", err, c.want)
		if logits != nil {
			t.Errorf("%s program: logits %v with the error, want nil", c.mode, logits)
		}
	}
}

// TestProgramLogitsRows: the logits of a sampling program are an error before a run and
// for a row outside [0, B*T), which the error names; the last row is in range.
func TestProgramLogitsRows(t *testing.T) {
	m, err := New(tiny("l2"), 1)
	if err != nil {
		t.Fatal(err)
	}
	p := mustProgram(t, m, Sample, 2)
	_, err = p.Logits(0)
	wantError(t, "sampling program before a run", err, "no run yet")
	fill(p, 1, m.Cfg.Vocab)
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	rows := 2 * m.Cfg.Context
	for _, r := range []int{-1, rows, rows + 3} {
		logits, err := p.Logits(r)
		wantError(t, "sampling program", err, "row "+itoa(r)+" out of range [0, "+itoa(rows)+")")
		if logits != nil {
			t.Errorf("row %d: logits %v with the error, want nil", r, logits)
		}
	}
	if l, err := p.Logits(rows - 1); err != nil || len(l) != m.Cfg.Vocab {
		t.Errorf("last row %d: %d logits, error %v; want %d logits", rows-1, len(l), err, m.Cfg.Vocab)
	}
}

// TestProgramGradErrors: a training program's gradients are an error before a run and for
// a parameter index out of range.
func TestProgramGradErrors(t *testing.T) {
	m, err := New(tiny("l2"), 1)
	if err != nil {
		t.Fatal(err)
	}
	p := mustProgram(t, m, Train, 1)
	_, err = p.Grad(0)
	wantError(t, "training program before a run", err, "no run yet")
	fill(p, 1, m.Cfg.Vocab)
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	n := len(p.Params())
	for _, i := range []int{-1, n} {
		_, err := p.Grad(i)
		wantError(t, "training program", err, "gradient "+itoa(i)+" out of range [0, "+itoa(n)+")")
	}
	if _, err := p.Grad(n - 1); err != nil {
		t.Errorf("gradient %d: %v", n-1, err)
	}
}

// itoa is strconv.Itoa for the messages above.
func itoa(i int) string { return strconv.Itoa(i) }
