package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"lipformer/data"
	"lipformer/internal/runtest"
	"lipformer/model"
	"lipformer/ngram"
	"lipformer/spec"
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
	cfg := model.Config{Arch: spec.ContractiveL2, Layers: 1, Heads: 2, Width: 16, Context: 16, Vocab: c.Vocab.Size(), Norm: spec.PreLN, LipC: 0.9, Dtype: spec.Float32, Std: 0.02}
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
	for split, want := range map[string]float64{"test": float64(sum.TestBPC), "valid": float64(sum.FinalValBPC)} {
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
	out := trainedRun(t, 2, 2)
	for _, v := range []string{"mlp", "none", "Attention"} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{"-ckpt", out, "-ablate", v}, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), "-ablate") {
			t.Errorf("-ablate %s: error %v, want one naming -ablate", v, err)
		}
	}
	for _, args := range [][]string{{"-batch", "0"}, {"-batch", "100000000000"}, {"-batch", "100000000000", "-ablate", "attention"}} {
		var stdout, stderr bytes.Buffer
		want := "evaluation needs an estimated"
		if args[1] == "0" {
			want = "-batch 0"
		}
		err := run(context.Background(), append([]string{"-ckpt", out}, args...), &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: error %v, want one containing %q", args, err, want)
		}
	}
}

// trainedRun trains a contractive-l2 model of the given depth for a few steps on a short
// text and returns its run directory.
func trainedRun(t *testing.T, layers, steps int) string {
	t.Helper()
	return trainedRunOf(t, model.Config{Arch: spec.ContractiveL2, Layers: layers, Heads: 2, Width: 16, Context: 16, Norm: spec.PreLN, LipC: 0.9, Dtype: spec.Float32, Std: 0.02}, steps)
}

// trainedRunOf trains a model of config cfg (its vocabulary the text's) for a few steps on a
// short text and returns its run directory.
func trainedRunOf(t *testing.T, cfg model.Config, steps int) string {
	t.Helper()
	path := runtest.TextFile(t, strings.Repeat("Call me Ishmael. Some years ago, never mind how long. ", 60))
	opt := train.DefaultOptions()
	opt.Steps, opt.Batch, opt.Warmup, opt.EvalEvery = steps, 4, 1, steps
	return runtest.Train(t, path, data.Options{}, cfg, opt, t.TempDir())
}

// TestEvalAblateAttention: -ablate attention prints the usual line and a table of L+2 rows
// (none, each layer, all), and -json carries them as "ablation" with the intact row's bpc
// equal to the result's and to plain eval's.
func TestEvalAblateAttention(t *testing.T) {
	const layers = 3
	out := trainedRun(t, layers, 2)
	eval := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), append([]string{"-ckpt", out, "-split", "valid", "-batch", "5"}, args...), &stdout, &stderr); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		return stdout.String()
	}
	lines := strings.Split(strings.TrimSpace(eval("-ablate", "attention")), "\n")
	if len(lines) != 3+layers+2 {
		t.Fatalf("%d lines, want the result, a title, a header and %d rows:\n%s", len(lines), layers+2, strings.Join(lines, "\n"))
	}
	for i, want := range []string{"none", "0", "1", "2", "all"} {
		f := strings.Fields(lines[3+i])
		if len(f) != 3 || f[0] != want {
			t.Errorf("row %d: %q, want layers %s, bpc and delta", i, lines[3+i], want)
		}
	}
	var plain, abl result
	if err := json.Unmarshal([]byte(eval("-json")), &plain); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(eval("-json", "-ablate", "attention")), &abl); err != nil {
		t.Fatal(err)
	}
	if plain.Ablation != nil {
		t.Errorf("plain eval has an ablation: %+v", plain.Ablation)
	}
	if len(abl.Ablation) != layers+2 {
		t.Fatalf("%d ablation rows, want %d", len(abl.Ablation), layers+2)
	}
	if a := abl.Ablation[0]; a.Layers != "none" || a.Delta != 0 || a.BPC != abl.BPC || abl.BPC != plain.BPC || abl.Bytes != plain.Bytes {
		t.Errorf("intact row %+v, result %.15g bpc over %d bytes, plain eval %.15g over %d", a, abl.BPC, abl.Bytes, plain.BPC, plain.Bytes)
	}
	for i, r := range abl.Ablation {
		if d := r.BPC - abl.BPC; r.Delta != d || r.BPC <= 0 {
			t.Errorf("row %d %+v: want delta %g", i, r, d)
		}
	}
}

// TestEvalNgramBaselines: -ngram 5 reports the bigram, trigram and 5-gram bpc of the
// chosen split, the test split's equal to the training summary's; -ngram-all reports every
// order; -data without -ckpt reports the baselines alone, the same numbers.
func TestEvalNgramBaselines(t *testing.T) {
	out := trainedRun(t, 1, 2)
	f, err := os.ReadFile(filepath.Join(out, train.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var sum train.Summary
	if err := json.Unmarshal(f, &sum); err != nil {
		t.Fatal(err)
	}
	c, err := data.Load(context.Background(), sum.Options.Data, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eval := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		return stdout.String()
	}
	var res result
	if err := json.Unmarshal([]byte(eval("-ckpt", out, "-ngram", "5", "-json")), &res); err != nil {
		t.Fatal(err)
	}
	if len(sum.Baselines) != 3 || !slices.Equal(res.Baselines, sum.Baselines) {
		t.Errorf("test-split baselines %v, training summary %v", res.Baselines, sum.Baselines)
	}
	want, err := ngram.Baselines(c.Train, c.Valid, c.Vocab.Bytes(), []int{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(eval("-ckpt", out, "-split", "valid", "-ngram", "4", "-ngram-all", "-json")), &res); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Baselines, want) {
		t.Errorf("valid-split baselines %v, want %v", res.Baselines, want)
	}
	var alone baselineResult
	if err := json.Unmarshal([]byte(eval("-data", sum.Options.Data, "-split", "valid", "-ngram", "3", "-json")), &alone); err != nil {
		t.Fatal(err)
	}
	if alone.Bytes != len(c.Valid)-1 || alone.Split != "valid" || !slices.Equal(alone.Baselines, want[1:3]) {
		t.Errorf("baselines alone %+v, want %v over %d bytes", alone, want[1:3], len(c.Valid)-1)
	}
	text := eval("-data", sum.Options.Data, "-split", "valid", "-ngram", "3")
	if line := "on " + c.Name + " valid: " + ngram.Format(want[1:3]) + " bpc over "; !strings.Contains(text, line) {
		t.Errorf("output %q, want a line with %q", text, line)
	}
	text = eval("-ckpt", out, "-ngram", "2")
	if lines := strings.Split(strings.TrimSpace(text), "\n"); len(lines) != 2 || !strings.Contains(lines[1], "bigram ") || strings.Contains(lines[1], "trigram") {
		t.Errorf("-ngram 2 output %q, want the checkpoint's line and a bigram line", text)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-ckpt", out, "-ngram", "-1"}, "-ngram -1"},
		{[]string{"-ckpt", out, "-ngram", "9"}, "-ngram 9"},
		{[]string{"-ckpt", out, "-ngram-all"}, "-ngram-all needs -ngram"},
		{[]string{"-data", sum.Options.Data}, "give -ngram"},
		{[]string{"-data", sum.Options.Data, "-ngram", "3", "-ablate", "attention"}, "-ablate needs -ckpt"},
		{[]string{"-data", filepath.Join(t.TempDir(), "missing.txt"), "-ngram", "3"}, "missing.txt"},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), c.args, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}

// TestEvalStride: -stride T gives plain eval's result, a smaller stride scores the same
// bytes with more context (another loss), and strides outside [1, T] or with -ablate are
// refused naming -stride.
func TestEvalStride(t *testing.T) {
	out := trainedRun(t, 2, 2)
	eval := func(args ...string) (result, error) {
		var stdout, stderr bytes.Buffer
		var r result
		err := run(context.Background(), append([]string{"-ckpt", out, "-split", "valid", "-json"}, args...), &stdout, &stderr)
		if err == nil {
			err = json.Unmarshal(stdout.Bytes(), &r)
		}
		return r, err
	}
	plain, err := eval()
	if err != nil {
		t.Fatal(err)
	}
	full, err := eval("-stride", strconv.Itoa(plain.Stride))
	if err != nil || full.BPC != plain.BPC || full.Bytes != plain.Bytes {
		t.Errorf("-stride %d: %+v, %v; plain eval %+v", plain.Stride, full, err, plain)
	}
	one, err := eval("-stride", "1")
	if err != nil || one.Bytes != plain.Bytes || one.Stride != 1 || one.BPC == plain.BPC {
		t.Errorf("-stride 1: %+v, %v; want the %d bytes of plain eval scored at another loss than %.6g", one, err, plain.Bytes, plain.BPC)
	}
	for _, args := range [][]string{{"-stride", "-1"}, {"-stride", strconv.Itoa(plain.Stride + 1)}, {"-stride", "2", "-ablate", "attention"}} {
		if _, err := eval(args...); err == nil || !strings.Contains(err.Error(), "-stride") {
			t.Errorf("%v: error %v, want one naming -stride", args, err)
		}
	}
}
