package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lipformer/data"
	"lipformer/internal/clitest"
	"lipformer/model"
	"lipformer/spec"
	"lipformer/train"
)

// TestHelpAndExtraArguments: -h and -help print the usage alone, and positional arguments
// are refused with the message every program gives.
func TestHelpAndExtraArguments(t *testing.T) {
	clitest.HelpAndExtraArguments(t, "eval", "ckpt", []string{"-ckpt", "nowhere"}, func(args []string, stdout, stderr io.Writer) error {
		return run(context.Background(), args, stdout, stderr)
	})
}

// TestEvalFindsARelativeCorpusPath: a run trained on a corpus given by a relative path,
// evaluated from another directory, finds the corpus at the absolute path stored with it,
// else in the run directory, and when it is in neither the error says the path came from
// the checkpoint, every place it was looked for, and names -data.
func TestEvalFindsARelativeCorpusPath(t *testing.T) {
	trainDir := t.TempDir()
	t.Chdir(trainDir)
	text := []byte(strings.Repeat("Call me Ishmael. Some years ago, never mind how long. ", 60))
	if err := os.WriteFile("shk.txt", text, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := data.Load(context.Background(), "shk.txt", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New(model.Config{Arch: spec.L2, Layers: 1, Heads: 2, Width: 8, Context: 8, Vocab: c.Vocab.Size(), Norm: spec.PreLN, Dtype: spec.Float32, Std: 0.02}, 1)
	if err != nil {
		t.Fatal(err)
	}
	opt := train.DefaultOptions()
	opt.Data, opt.Steps, opt.Batch, opt.Warmup, opt.EvalEvery = "shk.txt", 2, 2, 0, 2
	out := filepath.Join(trainDir, "out", "run")
	r := &train.Run{Model: m, Corpus: c, Opt: opt, Out: out, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if _, err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}

	t.Chdir(t.TempDir())
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-ckpt", out}, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "bpc") {
		t.Errorf("corpus at its stored absolute path: %v, output %q", err, stdout.String())
	}
	if err := os.Rename(filepath.Join(trainDir, "shk.txt"), filepath.Join(out, "shk.txt")); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"-ckpt", out}, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "bpc") {
		t.Errorf("corpus in the run directory: %v, output %q", err, stdout.String())
	}
	if err := os.Rename(filepath.Join(out, "shk.txt"), filepath.Join(trainDir, "moved.txt")); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), []string{"-ckpt", out}, &stdout, &stderr)
	for _, want := range []string{"corpus file shk.txt", "relative path stored in checkpoint " + filepath.Join(out, train.LatestFile),
		filepath.Join(trainDir, "shk.txt"), filepath.Join(out, "shk.txt"), "-data"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("corpus nowhere: error %v, want one mentioning %q", err, want)
		}
	}
	if err := run(context.Background(), []string{"-ckpt", out, "-data", filepath.Join(trainDir, "moved.txt")}, &stdout, &stderr); err != nil {
		t.Errorf("with -data: %v", err)
	}
}
