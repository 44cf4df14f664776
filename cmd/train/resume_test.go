package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"lipformer/train"
)

// trainRows trains with args and returns the training rows of out's metrics log.
func trainRows(t *testing.T, out string, args ...string) []train.TrainRow {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), append(args, "-sample", "0"), &stdout, &stderr); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stderr.String())
	}
	m, err := train.ReadMetrics(filepath.Join(out, train.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	return m.Train
}

// TestResumeFromAnotherDirectory: a run whose corpus was given by a relative path,
// resumed from another working directory, finds the corpus at the absolute path it
// stored; 15 steps and a resume of 15 more log the same training rows (loss, learning
// rate, gradient norm) as 30 steps in one go. With the corpus moved into the run
// directory, it is found there (and the run then stores that place); with the corpus
// nowhere, the resume is refused with an error saying where it was looked for, and
// changes nothing.
func TestResumeFromAnotherDirectory(t *testing.T) {
	home, elsewhere := t.TempDir(), t.TempDir()
	text := []byte(strings.Repeat("It was the best of times, it was the worst of times. ", 80))
	if err := os.WriteFile(filepath.Join(home, "text.txt"), text, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(home)
	whole, split := filepath.Join(t.TempDir(), "whole"), filepath.Join(t.TempDir(), "split")
	args := func(out string) []string {
		return append(tinyArgs("text.txt", out), "-schedule", "constant", "-warmup", "0", "-eval-every", "5")
	}
	one := trainRows(t, whole, append(args(whole), "-steps", "30")...)
	trainRows(t, split, append(args(split), "-steps", "15")...)

	t.Chdir(elsewhere)
	resumed := trainRows(t, split, "-resume", split, "-steps", "30")
	if len(one) != 30 || len(resumed) != 30 {
		t.Fatalf("%d rows in one go, %d resumed; want 30", len(one), len(resumed))
	}
	for i := range one {
		a, b := one[i], resumed[i]
		if a.Step != b.Step || a.Loss != b.Loss || a.LR != b.LR || a.GradNorm != b.GradNorm {
			t.Errorf("row %d: %+v in one go, %+v resumed", i, a, b)
		}
	}

	if err := os.Rename(filepath.Join(home, "text.txt"), filepath.Join(split, "text.txt")); err != nil {
		t.Fatal(err)
	}
	trainRows(t, split, "-resume", split, "-steps", "35")

	if err := os.Remove(filepath.Join(split, "text.txt")); err != nil {
		t.Fatal(err)
	}
	before, _ := train.ReadMetrics(filepath.Join(split, train.MetricsFile))
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"-resume", split, "-steps", "40", "-sample", "0"}, &stdout, &stderr)
	for _, want := range []string{"corpus file text.txt", "relative path stored in checkpoint " + filepath.Join(split, train.LatestFile),
		filepath.Join(elsewhere, "text.txt"), filepath.Join(split, "text.txt"), "-data"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("resume without its corpus: error %v, want one mentioning %q", err, want)
		}
	}
	if got, _ := train.ReadMetrics(filepath.Join(split, train.MetricsFile)); !reflect.DeepEqual(got.Train, before.Train) {
		t.Errorf("the refused resume changed the metrics log")
	}
}
