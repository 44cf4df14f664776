package bench

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"lipformer/internal/testfile"
)

// TestPool: Go's times are pooled per backend, PyTorch's over every file, sample per
// generated token; the range is of the ratios within each file; sample's speedup over the
// training step is the ratio of the pooled ns per position and per generated token.
func TestPool(t *testing.T) {
	rec := func(impl, backend, mode string, ms, nsGen float64) Measurement {
		r := Measurement{Impl: impl, Config: "P1", Arch: "dp", Mode: mode, Backend: backend, MsMedian: ms, NsPerGenerated: nsGen}
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
	cmp := Comparison{Impl: "compare", Config: "P1", Arch: "dp", Mode: "train", Ratio: 9}
	files := []string{
		testfile.JSONL(t, "a.jsonl", rec("go", "gonum", "train", 100, 0), rec("go", "gonum", "sample", 40, 2e6), rec("torch", "openblas", "train", 50, 0), rec("torch", "openblas", "sample", 8, 0), cmp),
		testfile.JSONL(t, "b.jsonl", rec("go", "openblas", "train", 90, 0), rec("torch", "openblas", "train", 100, 0)),
		testfile.JSONL(t, "c.jsonl", rec("go", "gonum", "train", 120, 0), rec("go", "gonum", "sample", 40, 4e6), rec("torch", "openblas", "train", 60, 0), rec("torch", "openblas", "sample", 4, 0)),
	}
	ps, backends, err := Pool(files)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || strings.Join(backends, ",") != "gonum,openblas" {
		t.Fatalf("%d pooled rows, backends %v: want 2 (train, sample) and gonum,openblas", len(ps), backends)
	}
	tr, sa := ps[0], ps[1]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if tr.Mode != "train" || !near(tr.GoMs["gonum"], 110) || tr.GoRuns["gonum"] != 2 || !near(tr.GoMs["openblas"], 90) || !near(tr.TorchMs, 60) || tr.TorchRuns != 3 {
		t.Errorf("train: %+v, want gonum 110 ms of 2 runs, openblas 90, PyTorch 60 of 3", tr)
	}
	if !near(tr.Ratio["gonum"], 110.0/60) || !near(tr.RatioMin["gonum"], 2) || !near(tr.RatioMax["gonum"], 2) || !near(tr.RatioMin["openblas"], 0.9) {
		t.Errorf("train ratios %v, range %v..%v: want 1.83 (2..2) for gonum and openblas's range from 0.9", tr.Ratio, tr.RatioMin, tr.RatioMax)
	}
	if sa.Mode != "sample" || !near(sa.GoMs["gonum"], 3) || !near(sa.TorchMs, 6) || !near(sa.RatioMin["gonum"], 0.25) || !near(sa.RatioMax["gonum"], 1) {
		t.Errorf("sample: %+v, want Go 3 ms per generated token, PyTorch 6, paired ratios 0.25..1", sa)
	}
	// gonum's train: 110 us per position (median of 100 and 120 ms per 1000); its sample: 3 ms
	if !near(sa.VsTrain["gonum"], 110e3/3e6) || !near(sa.VsTrainMin["gonum"], 7+40/4e6) || !near(sa.VsTrainMax["gonum"], 7+40/2e6) || tr.VsTrain != nil {
		t.Errorf("sample's speedup over train %v (%v..%v), train's %v: want %v (%v..%v) and none", sa.VsTrain, sa.VsTrainMin, sa.VsTrainMax, tr.VsTrain, 110e3/3e6, 7+40/4e6, 7+40/2e6)
	}
	if _, ok := sa.VsTrain["openblas"]; ok {
		t.Errorf("sample's speedup for openblas %v: want none (no sample run)", sa.VsTrain)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{filepath.Join(t.TempDir(), "none.jsonl")}, "none.jsonl"},
		{[]string{testfile.JSONL(t, "bad.jsonl", 3)}, "bad.jsonl:1"},
		{[]string{testfile.JSONL(t, "empty.jsonl", cmp)}, "no go or torch records"},
		{[]string{files[0], testfile.JSONL(t, "b16.jsonl", func() Measurement { r := rec("go", "gonum", "train", 1, 0); r.Batch = 16; return r }())},
			"pool runs of the same settings"},
	} {
		if _, _, err := Pool(c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}
