package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lipformer/internal/clitest"
	"lipformer/train"
)

// TestHelpAndExtraArguments: -h and -help print the usage alone, and positional arguments
// are refused with the message every program gives.
func TestHelpAndExtraArguments(t *testing.T) {
	clitest.HelpAndExtraArguments(t, "train", "arch", []string{"-data", "nowhere.txt"}, func(args []string, stdout, stderr io.Writer) error {
		return run(context.Background(), args, stdout, stderr)
	})
}

// TestHugeConfigurationsAreRefused: configurations whose memory no machine has are refused
// with the estimate and the limit, before the corpus is read (a missing file here) and
// before anything is written.
func TestHugeConfigurationsAreRefused(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.txt")
	for _, args := range [][]string{
		{"-batch", "100000000", "-layers", "1", "-width", "32"},
		{"-ctx", "10000000", "-layers", "1", "-width", "32"},
		{"-width", "1000000"},
	} {
		out := filepath.Join(t.TempDir(), "run")
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"-data", missing, "-out", out}, args...), &stdout, &stderr)
		for _, want := range []string{"training needs an estimated", "activations and gradients", "more than", "reduce the batch"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%v: error %v, want one containing %q", args, err, want)
			}
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: %s was created", args, out)
		}
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
		{[]string{"-resume", held, "-config", "../../configs/shakespeare.toml"}, "-config with -resume"},
		{[]string{"-config", "../../configs/shakespeare.toml", "-heads", "3"}, "width 128 with 3 heads"},
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
