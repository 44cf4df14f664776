package main

import (
	"bytes"
	"strings"
	"testing"

	"lipformer/data"
	"lipformer/internal/runtest"
	"lipformer/model"
	"lipformer/spec"
	"lipformer/train"
)

// checkpoint trains a tiny model for a few steps and returns its run directory.
func checkpoint(t *testing.T) string {
	t.Helper()
	path := runtest.TextFile(t, strings.Repeat("abc abd abe. ", 200))
	opt := train.DefaultOptions()
	opt.Steps, opt.Batch, opt.Warmup, opt.EvalEvery = 3, 2, 0, 3
	return runtest.Train(t, path, data.Options{}, model.Config{Arch: spec.L2, Layers: 1, Heads: 1, Width: 8, Context: 8, Norm: spec.PreLN, Dtype: spec.Float32, Std: 0.02},
		opt, t.TempDir())
}

func TestSampleContinuesThePrompt(t *testing.T) {
	dir := checkpoint(t)
	var a, b, stderr bytes.Buffer
	args := []string{"-ckpt", dir, "-prompt", "ab", "-n", "20", "-seed", "3"}
	if err := run(args, &a, &stderr); err != nil {
		t.Fatal(err)
	}
	if err := run(args, &b, &stderr); err != nil {
		t.Fatal(err)
	}
	out := strings.TrimSuffix(a.String(), "\n")
	if !strings.HasPrefix(out, "ab") || len(out) != 22 || a.String() != b.String() {
		t.Fatalf("sample %q (again: %q), want the prompt and 20 more bytes, the same each time", a.String(), b.String())
	}
	for _, ch := range out {
		if !strings.ContainsRune("abcde .", ch) {
			t.Fatalf("sample %q has byte %q outside the vocabulary", out, ch)
		}
	}
	var slide bytes.Buffer
	if err := run(append(args, "-window", "slide"), &slide, &stderr); err != nil {
		t.Fatal(err)
	}
	if s := strings.TrimSuffix(slide.String(), "\n"); !strings.HasPrefix(s, "ab") || len(s) != 22 {
		t.Fatalf("sample with -window slide %q, want the prompt and 20 more bytes", s)
	}
	var three bytes.Buffer
	if err := run(append(args, "-samples", "3"), &three, &stderr); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(three.String(), "\n"), "\n")
	if len(lines) != 6 || lines[0] != "--- sample 1 of 3 ---" || lines[4] != "--- sample 3 of 3 ---" {
		t.Fatalf("-samples 3 printed %q, want 3 headed samples", three.String())
	}
	for _, l := range []string{lines[1], lines[3], lines[5]} {
		if !strings.HasPrefix(l, "ab") || len(l) != 22 {
			t.Fatalf("-samples 3: sample %q, want the prompt and 20 more bytes", l)
		}
	}
	if lines[1] == lines[3] && lines[3] == lines[5] {
		t.Errorf("-samples 3 drew the same sample three times: %q", lines[1])
	}
}

func TestSampleRejectsBadInput(t *testing.T) {
	dir := checkpoint(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-ckpt", dir, "-prompt", "xyz"}, "prompt"},
		{[]string{"-ckpt", dir, "-n", "-1"}, "-n"},
		{[]string{"-ckpt", dir, "-samples", "0"}, "-samples 0, want >= 1"},
		{[]string{"-ckpt", dir, "-prompt", "a", "-temperature", "-1"}, "temperature"},
		{[]string{"-ckpt", dir, "-prompt", "a", "-temperature", "NaN"}, "-temperature NaN: want a finite number"},
		{[]string{"-ckpt", dir, "-prompt", "a", "-temperature", "Inf"}, "-temperature +Inf: want a finite number"},
		{[]string{"-ckpt", dir, "-window", "wrap"}, `-window: window policy "wrap", want shift or slide`},
		{[]string{"-ckpt", dir, "-prompt", "abcabcabc"}, "-prompt: 9 bytes, want at most the model's context of 8"},
		{[]string{}, "-ckpt"},
		{[]string{"-ckpt", dir, "-prompt", "a", "-samples", "100000000000"}, "sampling needs an estimated"},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(c.args, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error mentioning %q", c.args, err, c.want)
		}
	}
}
