package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lipformer/data"
	"lipformer/model"
	"lipformer/train"
)

// TestEvalMatchesTraining: eval on a run's checkpoint reports the test and validation bpc
// that the training summary reported for the same weights.
func TestEvalMatchesTraining(t *testing.T) {
	path := filepath.Join(t.TempDir(), "text.txt")
	os.WriteFile(path, []byte(strings.Repeat("Call me Ishmael. Some years ago, never mind how long. ", 60)), 0o644)
	c, err := data.Load(context.Background(), path, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := model.Config{Arch: "contractive-l2", Layers: 1, Heads: 2, Width: 16, Context: 16, Vocab: c.Vocab.Size(), Norm: "pre", LipC: 0.9, Dtype: "float32", Std: 0.02}
	m, err := model.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	opt := train.DefaultOptions()
	opt.Data, opt.Steps, opt.Batch, opt.Warmup, opt.EvalEvery = path, 8, 4, 2, 4
	out := t.TempDir()
	r := &train.Run{Model: m, Corpus: c, Opt: opt, Out: out, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	sum, err := r.Train(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for split, want := range map[string]float64{"test": sum.TestBPC, "valid": sum.FinalValBPC} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), []string{"-ckpt", out, "-split", split, "-batch", "3", "-json"}, &stdout, &stderr); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		var res result
		if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		if d := res.BPC - want; d > 1e-5 || d < -1e-5 {
			t.Errorf("%s: eval %.7f bpc, training summary %.7f", split, res.BPC, want)
		}
	}
}

func TestEvalRejectsBadArguments(t *testing.T) {
	for _, args := range [][]string{{}, {"-ckpt", t.TempDir()}, {"-ckpt", t.TempDir(), "-split", "train"}} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, &stdout, &stderr); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
