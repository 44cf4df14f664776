package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	args := []string{"-data", data, "-layers", "1", "-width", "16", "-heads", "2", "-ctx", "16", "-batch", "2",
		"-steps", "6", "-eval-every", "3", "-eval-bytes", "200", "-out", out, "-json", "-sample", "0"}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
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
		{[]string{"-data", data, "-split", "0.5,0.6"}, "split"},
		{[]string{"-resume", t.TempDir(), "-lr", "1"}, "-lr cannot change"},
		{[]string{"-resume", t.TempDir()}, "ckpt.safetensors"},
	} {
		var stdout, stderr bytes.Buffer
		c.args = append(c.args, "-out", filepath.Join(t.TempDir(), "run"), "-steps", "2")
		err := run(context.Background(), c.args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one mentioning %q", c.args, err, c.want)
		}
	}
}

// TestReportShowsBaselines: the human summary puts the n-gram baselines beside test bpc.
func TestReportShowsBaselines(t *testing.T) {
	sum := &train.Summary{Corpus: "opticks", Steps: 10, FinalValBPC: 3.6, ValBytes: 99, TestBPC: 3.519, TestBytes: 100,
		Baselines: []ngram.Result{{Order: 2, BPC: 3.51}, {Order: 3, BPC: 2.82}, {Order: 5, BPC: 2.2}}}
	var out bytes.Buffer
	if err := report(&out, &train.Run{Out: t.TempDir()}, sum, false, 0); err != nil {
		t.Fatal(err)
	}
	want := "test bpc 3.5190 (100 bytes; bigram 3.5100, trigram 2.8200, 5-gram 2.2000); "
	if !strings.Contains(out.String(), want) {
		t.Errorf("report:\n%s\nwant a line with %q", out.String(), want)
	}
}
