package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lipformer/train"
)

// TestHelpAndExtraArguments: -h and -help print the usage alone and succeed (run returns
// nil, on which main exits 0), and positional arguments are refused, before any work, with
// the message every program gives.
func TestHelpAndExtraArguments(t *testing.T) {
	for _, h := range []string{"-h", "-help"} {
		var stdout, stderr bytes.Buffer
		args := []string{h}
		err := run(context.Background(), args, &stdout, &stderr)
		if strings.Contains(stderr.String(), "help requested") {
			t.Errorf("%s: stderr %q reports the help as an error", h, stderr.String())
		}
		if err != nil {
			t.Errorf("%s: error %v, want none (the usage is the whole answer)", h, err)
		}
		if u := stderr.String(); !strings.HasPrefix(u, "Usage of train:") || !strings.Contains(u, "  -arch ") || stdout.Len() > 0 {
			t.Errorf("%s: stdout %q, stderr %q; want the usage on stderr alone", h, stdout.String(), u)
		}
	}
	var stdout, stderr bytes.Buffer
	args := []string{"-data", "nowhere.txt", "extra"}
	err := run(context.Background(), args, &stdout, &stderr)
	want := `unexpected arguments ["extra"]: train takes only flags (-h lists them)`
	if err == nil || err.Error() != want {
		t.Errorf("%q: error %v, want %q", args, err, want)
	}
}

// TestFlagsAreCheckedBeforeAnyWork: a bad flag is reported before the corpus is read (here
// a missing file, whose error would come first otherwise) or a run starts.
func TestFlagsAreCheckedBeforeAnyWork(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.txt")
	held := t.TempDir()
	if err := os.WriteFile(filepath.Join(held, train.MetricsFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-sample", "-1"}, "-sample -1, want >= 0"},
		{[]string{"-json", "-sample", "20"}, "-sample 20 with -json"},
		{[]string{"-heads", "3"}, "width 128 with 3 heads"},
		{[]string{"-arch", "rnn"}, `arch "rnn"`},
		{[]string{"-norm", "middle"}, "middle"},
		{[]string{"-batch", "0"}, "batch 0"},
		{[]string{"-clip", "NaN"}, "-clip NaN: want a finite number"},
		{[]string{"-lr", "+Inf"}, "-lr +Inf"},
		{[]string{"-out", held}, held + " already holds a run"},
		{[]string{"-resume", held, "-sample", "-5"}, "-sample -5"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"-data", missing}, c.args...)
		if !slices.Contains(c.args, "-out") {
			args = append(args, "-out", filepath.Join(t.TempDir(), "run"))
		}
		err := run(context.Background(), args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one mentioning %q", c.args, err, c.want)
		}
	}
}
