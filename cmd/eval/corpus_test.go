package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lipformer/data"
	"lipformer/internal/runtest"
	"lipformer/internal/testfile"
	"lipformer/model"
	"lipformer/spec"
	"lipformer/train"
)

// runOn trains a tiny model for 2 steps on the corpus named corpus (in the data
// directory dir) and returns its run directory.
func runOn(t *testing.T, corpus, dir string) string {
	t.Helper()
	opt := train.DefaultOptions()
	opt.Steps, opt.Batch, opt.Warmup, opt.EvalEvery, opt.EvalBytes = 2, 4, 1, 2, 200
	return runtest.Train(t, corpus, data.Options{Dir: dir}, model.Config{Arch: spec.ContractiveL2, Layers: 1, Heads: 2, Width: 16, Context: 16,
		Norm: spec.PreLN, LipC: 0.9, Dtype: spec.Float32, Std: 0.02}, opt, t.TempDir())
}

// TestEvalWarnsOnAnotherText: eval of a checkpoint whose corpus file was rewritten with
// the same bytes in another order (the same vocabulary) warns, naming the file and the
// stored and found hashes; on the unchanged file it does not.
func TestEvalWarnsOnAnotherText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "text.txt")
	text := []byte(strings.Repeat("Call me Ishmael. Some years ago, never mind how long. ", 60))
	os.WriteFile(path, text, 0o644)
	out := runOn(t, path, "")
	eval := func() string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), []string{"-ckpt", out, "-batch", "3"}, &stdout, &stderr); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		return stderr.String()
	}
	if log := eval(); strings.Contains(log, "WARN") {
		t.Errorf("the unchanged corpus: a warning\n%s", log)
	}
	slices.Reverse(text)
	os.WriteFile(path, text, 0o644)
	log := eval()
	for _, want := range []string{"WARN", path, "sha256"} {
		if !strings.Contains(log, want) {
			t.Errorf("the reordered corpus: no %q in the log\n%s", want, log)
		}
	}
}

// TestEvalFindsTheStoredDataDir: eval of a run of -data shakespeare -data-dir D, given no
// -data-dir, reads the corpus from D, not from the default directory (which is empty, and
// whose download could only reach a closed local port).
func TestEvalFindsTheStoredDataDir(t *testing.T) {
	dir := testfile.SharedData(t, 2)
	out := runOn(t, data.NameShakespeare, dir)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-ckpt", out, "-batch", "8"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "on shakespeare test") {
		t.Errorf("output %q", stdout.String())
	}
}
