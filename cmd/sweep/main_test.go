package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"lipformer/sweep"
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

// tiny returns the flags of a sweep of tiny models on a small corpus into out.
func tiny(t *testing.T, out string, more ...string) []string {
	return append([]string{"-data", corpusFile(t), "-width", "16", "-heads", "2", "-ctx", "16", "-batch", "2",
		"-steps", "4", "-eval-every", "2", "-eval-bytes", "200", "-out", out}, more...)
}

// readCSV returns the table's rows as maps from column to cell.
func readCSV(t *testing.T, out string) []map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(out, sweep.CSVFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for _, l := range lines[1:] {
		r := map[string]string{}
		for i, k := range lines[0] {
			r[k] = l[i]
		}
		rows = append(rows, r)
	}
	return rows
}

func TestSweepWritesTablesThenSkipsFinishedRuns(t *testing.T) {
	out := t.TempDir()
	args := tiny(t, out, "-archs", "dp,l2", "-depths", "1,2")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	rows := readCSV(t, out)
	names := []string{"dp-L1-pre-s1", "dp-L2-pre-s1", "l2-L1-pre-s1", "l2-L2-pre-s1"}
	if len(rows) != len(names) {
		t.Fatalf("%d rows, want %d", len(rows), len(names))
	}
	for i, r := range rows {
		if r["run"] != names[i] || r["status"] != sweep.StatusDone || r["steps"] != "4" || r["final_val_bpc"] == "" ||
			r["best_val_bpc"] == "" || r["test_bpc"] == "" || r["first_nonfinite_step"] != "" || r["max_grad_norm"] == "" {
			t.Errorf("row %d: %v", i, r)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, sweep.MarkdownFile))
	if err != nil || !strings.Contains(string(md), "| l2-L2-pre-s1 | l2 | 2 | pre | 1 | done | 4 |") {
		t.Errorf("%s: %v\n%s", sweep.MarkdownFile, err, md)
	}
	before, err := os.ReadFile(filepath.Join(out, names[0], train.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("second invocation: %v\n%s", err, stderr.String())
	}
	if n := strings.Count(stderr.String(), "skipped"); n != 4 {
		t.Errorf("second invocation skipped %d runs, want 4:\n%s", n, stderr.String())
	}
	after, _ := os.ReadFile(filepath.Join(out, names[0], train.MetricsFile))
	if !bytes.Equal(before, after) {
		t.Error("the second invocation changed a finished run's metrics")
	}
}

// cancelOn is a log writer that cancels a context when a line contains a word.
type cancelOn struct {
	mu     sync.Mutex
	word   string
	cancel context.CancelFunc
	buf    bytes.Buffer
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if bytes.Contains(p, []byte(c.word)) {
		c.cancel()
	}
	return c.buf.Write(p)
}

func TestInterruptedSweepResumes(t *testing.T) {
	out := t.TempDir()
	args := tiny(t, out, "-archs", "l2", "-depths", "1,2", "-steps", "6", "-eval-every", "3")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &cancelOn{word: "msg=validation", cancel: cancel}
	var stdout bytes.Buffer
	if err := run(ctx, args, &stdout, logs); !errors.Is(err, errInterrupted) {
		t.Fatalf("error %v, want the interruption\n%s", err, logs.buf.String())
	}
	rows := readCSV(t, out)
	if rows[0]["status"] != sweep.StatusInterrupted || rows[0]["steps"] != "3" || rows[1]["status"] != sweep.StatusPending {
		t.Fatalf("after the interruption: %v", rows)
	}
	var stderr bytes.Buffer
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("resuming: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "resuming") {
		t.Errorf("the second invocation did not resume:\n%s", stderr.String())
	}
	rows = readCSV(t, out)
	for i, r := range rows {
		if r["status"] != sweep.StatusDone || r["steps"] != "6" {
			t.Errorf("row %d after resuming: %v", i, r)
		}
	}
	m, err := train.ReadMetrics(filepath.Join(out, "l2-L1-pre-s1", train.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range m.Train {
		if r.Step != i || len(m.Train) != 6 {
			t.Fatalf("resumed run's training rows are not steps 0..5 once each: %+v", m.Train)
		}
	}
}

func TestDivergentRunsAreRecordedAndTheSweepGoesOn(t *testing.T) {
	out := t.TempDir()
	args := tiny(t, out, "-archs", "dp", "-depths", "1,2", "-lr", "1e30", "-clip", "0")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	for i, r := range readCSV(t, out) {
		if r["status"] != sweep.StatusNonFinite || r["diverged"] != "yes" || r["first_nonfinite_step"] == "" ||
			r["final_val_bpc"] != "" || r["test_bpc"] != "" {
			t.Errorf("row %d: %v", i, r)
		}
	}
	if n := strings.Count(stderr.String(), "diverged: recorded"); n != 2 {
		t.Errorf("%d runs logged as diverged, want 2:\n%s", n, stderr.String())
	}
}

func TestDryRunListsRunsAndWritesNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep")
	var stdout, stderr bytes.Buffer
	args := tiny(t, out, "-archs", "dp,contractive-l2", "-depths", "3", "-norms", "pre,post", "-seeds", "1,2", "-dry-run")
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	got := stdout.String()
	for _, want := range []string{"train    " + filepath.Join(out, "dp-L3-pre-s1"), filepath.Join(out, "contractive-l2-L3-post-s2"), "8 runs"} {
		if !strings.Contains(got, want) {
			t.Errorf("dry run lacks %q:\n%s", want, got)
		}
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dry run created %s", out)
	}
}

func TestFlagErrors(t *testing.T) {
	done := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), tiny(t, done, "-archs", "l2", "-depths", "1", "-steps", "2"), &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-archs", "dp,rnn"}, `-archs: arch "rnn", want one of dp`},
		{[]string{"-depths", "0"}, "-depths"},
		{[]string{"-depths", "2,x"}, `"x"`},
		{[]string{"-depths", "2,2"}, "given twice"},
		{[]string{"-norms", "mid"}, "-norms"},
		{[]string{"-seeds", "-1"}, "-seeds"},
		{[]string{"-heads", "3"}, "heads"},
		{[]string{"-archs", "dp,contractive-l2", "-depths", "1,2", "-lip-c", "0"}, "run contractive-l2-L1-pre-s1: model config: lip_c 0"},
		{[]string{"-steps", "0"}, "steps"},
		{[]string{"-archs", "dp", "-depths", "1,2", "-width", "1000000"}, "run dp-L1-pre-s1: training needs an estimated"}, // before any run starts
		{[]string{"extra"}, "unexpected arguments"},
	} {
		args := tiny(t, filepath.Join(t.TempDir(), "sweep"), c.args...)
		if err := run(context.Background(), args, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.args, err, c.want)
		}
	}
	err := run(context.Background(), tiny(t, done, "-archs", "l2", "-depths", "1", "-steps", "2", "-lr", "0.002"), &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "lr: 0.002 here, 0.001 stored") || !strings.Contains(err.Error(), train.SummaryFile) {
		t.Errorf("changed -lr on an existing sweep: error %v", err)
	}
}

func TestRunCrashedBeforeItsFirstCheckpointRestarts(t *testing.T) {
	out := t.TempDir()
	args := tiny(t, out, "-archs", "l2", "-depths", "1")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(out, "l2-L1-pre-s1")
	for _, f := range []string{train.SummaryFile, train.LatestFile, train.BestFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	metrics := filepath.Join(dir, train.MetricsFile)
	before, _ := os.ReadFile(metrics)
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	after, _ := os.ReadFile(metrics)
	if !strings.Contains(stderr.String(), "restarting") || strings.Count(string(after), "\n") != strings.Count(string(before), "\n") {
		t.Errorf("not restarted from scratch: %d metrics lines before, %d after\n%s",
			strings.Count(string(before), "\n"), strings.Count(string(after), "\n"), stderr.String())
	}
	if rows := readCSV(t, out); rows[0]["status"] != sweep.StatusDone {
		t.Errorf("restarted run: %v", rows[0])
	}
}
