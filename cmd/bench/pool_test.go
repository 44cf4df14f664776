package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"lipformer/bench"
	"lipformer/internal/testfile"
)

// TestPoolTable: -pool prints bench.Pool's table of the files (the ratio with its range
// within files, sample's speedup over the training step) and refuses bad arguments.
func TestPoolTable(t *testing.T) {
	rec := func(impl, backend, mode string, ms, nsGen float64) bench.Measurement {
		r := bench.Measurement{Impl: impl, Config: "P1", Arch: "dp", Mode: mode, Backend: backend, MsMedian: ms, NsPerGenerated: nsGen}
		if impl == "go" && mode == "train" {
			r.NsPerToken = ms * 1e3 // 1000 positions per run
		}
		if impl == "go" && mode == "sample" {
			r.SpeedupVsTrain = 7 + ms/nsGen // a value of the record's own, within its run
		}
		if impl == "torch" && mode == "sample" {
			r.GeneratedPerS = 1e3 / ms // one token per run, as torch_ref.py reports it
		}
		return r
	}
	cmp := bench.Comparison{Impl: "compare", Config: "P1", Arch: "dp", Mode: "train", Ratio: 9}
	files := []string{
		testfile.JSONL(t, "a.jsonl", rec("go", "gonum", "train", 100, 0), rec("go", "gonum", "sample", 40, 2e6), rec("torch", "openblas", "train", 50, 0), rec("torch", "openblas", "sample", 8, 0), cmp),
		testfile.JSONL(t, "b.jsonl", rec("go", "openblas", "train", 90, 0), rec("torch", "openblas", "train", 100, 0)),
		testfile.JSONL(t, "c.jsonl", rec("go", "gonum", "train", 120, 0), rec("go", "gonum", "sample", 40, 4e6), rec("torch", "openblas", "train", 60, 0), rec("torch", "openblas", "sample", 4, 0)),
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), append([]string{"-pool"}, files...), &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if out := stdout.String(); !strings.Contains(out, "pooled over 3 files") || !strings.Contains(out, "1.83 (2.00..2.00)") || !strings.Contains(out, "0.04 (7.00..7.00)") {
		t.Errorf("table:\n%s", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-pool"}, "-pool: name the JSONL files"},
		{[]string{"-pool", filepath.Join(t.TempDir(), "none.jsonl")}, "none.jsonl"},
	} {
		if err := run(context.Background(), c.args, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}
