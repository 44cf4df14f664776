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

// TestInvertWarnsOnAnotherText: invert on a checkpoint whose corpus file was rewritten
// with the same bytes in another order warns, naming the file; on the unchanged file it
// does not.
func TestInvertWarnsOnAnotherText(t *testing.T) {
	out := checkpoint(t, spec.InvertibleL2)
	path := filepath.Join(filepath.Dir(out), "text.txt")
	invert := func() string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), []string{"-ckpt", out, "-batch", "2", "-spread", "1"}, &stdout, &stderr); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		return stderr.String()
	}
	if log := invert(); strings.Contains(log, "corpus") && strings.Contains(log, "WARN") {
		t.Errorf("the unchanged corpus: a warning\n%s", log)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(text)
	os.WriteFile(path, text, 0o644)
	log := invert()
	for _, want := range []string{"WARN", path, "sha256"} {
		if !strings.Contains(log, want) {
			t.Errorf("the reordered corpus: no %q in the log\n%s", want, log)
		}
	}
}

// TestInvertFindsTheStoredDataDir: invert on a run of -data shakespeare -data-dir D, given
// no -data-dir, reads the corpus from D, not from the default directory (which is empty,
// and whose download could only reach a closed local port). It reads the real corpus in
// DATA at the repository root and is skipped without it.
func TestInvertFindsTheStoredDataDir(t *testing.T) {
	dir := testfile.SharedData(t, 2)
	o := train.DefaultOptions()
	o.Steps, o.Batch, o.Warmup, o.EvalEvery, o.EvalBytes = 2, 2, 0, 2, 100
	out := runtest.Train(t, data.NameShakespeare, data.Options{Dir: dir}, model.Config{Arch: spec.InvertibleL2, Layers: 1, Heads: 2, Width: 8,
		Context: 8, Norm: spec.NoLN, LipC: 0.9, Dtype: spec.Float32, Std: 0.3}, o, t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-ckpt", out, "-batch", "2", "-spread", "1"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
}
