package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lipformer/data"
	"lipformer/flow"
	"lipformer/internal/jsonfloat"
	"lipformer/internal/runtest"
	"lipformer/model"
	"lipformer/spec"
	"lipformer/train"
)

// checkpoint trains a tiny model of the architecture for 3 steps on a small corpus file and
// returns its run directory.
func checkpoint(t *testing.T, arch spec.Arch) string {
	t.Helper()
	path := runtest.TextFile(t, strings.Repeat("It was the best of times, it was the worst of times. ", 40))
	o := train.DefaultOptions()
	o.Steps, o.Batch, o.Warmup, o.EvalEvery, o.EvalBytes = 3, 2, 0, 3, 100
	return runtest.Train(t, path, data.Options{}, model.Config{Arch: arch, Layers: 1, Heads: 2, Width: 8, Context: 8, Norm: spec.NoLN,
		LipC: 0.9, Dtype: spec.Float32, Std: 0.3}, o, filepath.Join(filepath.Dir(path), "run"))
}

// records parses -json output.
func records(t *testing.T, out []byte) []flow.Record {
	t.Helper()
	var rs []flow.Record
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r struct {
			flow.Record
			Lipschitz any `json:"lipschitz"`
			Step      any `json:"final_step"`
			Error     any `json:"reconstruction_error"`
			Rate      any `json:"contraction_rate"`
			InputNorm any `json:"input_norm"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		rs = append(rs, r.Record)
	}
	return rs
}

// TestInvertibleL2Inverts: every sub-block of a trained invertible-l2 checkpoint inverts
// the data windows (as a stack) and the adversarial and random inputs; -json writes one
// object per sub-block and input, -plot a figure, and the exit status is 0. With an
// iteration cap of 2 the certified sub-blocks fail and the status is not 0.
func TestInvertibleL2Inverts(t *testing.T) {
	run1 := checkpoint(t, spec.InvertibleL2)
	plotPath := filepath.Join(t.TempDir(), "inv.png")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-ckpt", run1, "-batch", "2", "-spread", "1,100", "-json", "-plot", plotPath}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	rs := records(t, stdout.Bytes())
	if len(rs) != 2*(1+2*2) {
		t.Fatalf("%d records, want 2 sub-blocks x (data + 2 kinds x 2 spreads) = 10", len(rs))
	}
	for _, r := range rs {
		if !r.Converged || r.Failed || !r.Certified || r.Arch != "invertible-l2" {
			t.Errorf("record %+v: want a certified, converged inversion", r)
		}
	}
	if h := stderr.String(); !strings.Contains(h, "all 10 inversions converged") || !strings.Contains(h, "\nlargest reconstruction error: ") ||
		!strings.Contains(h, "\ncolumns: input: ") || !strings.Contains(h, "error: the reconstruction error") {
		t.Errorf("summary: want the largest error and the columns explained:\n%s", h)
	}
	if st, err := os.Stat(plotPath); err != nil || st.Size() == 0 {
		t.Errorf("plot: %v", err)
	}
	stdout.Reset()
	stderr.Reset()
	err := run(context.Background(), []string{"-ckpt", run1, "-batch", "2", "-spread", "1", "-max-iter", "2", "-tol", "1e-14"}, &stdout, &stderr)
	if err == nil || !strings.Contains(stdout.String(), "a bug") {
		t.Errorf("2 iterations: error %v, output %s; want a failure of the certified sub-blocks", err, stdout.String())
	}
}

// TestLargestError: the summary names the largest reconstruction error measured, its
// sub-block and input, beside the threshold; a NaN error counts as the largest.
func TestLargestError(t *testing.T) {
	rs := []flow.Record{
		{Block: "h0.attn", Input: flow.InputData, Stack: true, Error: 3e-11},
		{Block: "h1.mlp", Input: flow.InputRandom, Spread: 10, Error: 2.5e-9},
		{Block: "h0.mlp", Input: flow.InputAdversarial, Spread: 1, Error: 1e-12},
	}
	want := "largest reconstruction error: 2.5e-09, h1.mlp on random 10 (a failure above -max-error 1e-06)"
	if got := largestError(rs, 1e-6); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	rs[2].Error = jsonfloat.Float(math.NaN())
	if got := largestError(rs, 1e-6); !strings.HasPrefix(got, "largest reconstruction error: NaN, h0.mlp on adversarial 1 ") {
		t.Errorf("with a NaN error: got %q", got)
	}
}

// TestDPControlFailsExpectedly: the invertible-dp control fails on the adversarial inputs
// at a large spread, only in its uncertified attention, and the exit status is 0.
func TestDPControlFailsExpectedly(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-ckpt", checkpoint(t, spec.InvertibleDP), "-batch", "2", "-spread", "1,1000"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out := stdout.String()
	t.Log(out)
	if !strings.Contains(out, "the expected finding") || !strings.Contains(out, "h0.attn on adversarial 1000") || strings.Contains(out, "h0.mlp on") {
		t.Errorf("summary does not report the control's attention failing at spread 1000 alone:\n%s", out)
	}
	if !strings.Contains(stderr.String(), "did not converge") {
		t.Errorf("no warning logged:\n%s", stderr.String())
	}
}

func TestBadFlagsGiveClearErrors(t *testing.T) {
	dp := filepath.Join(t.TempDir(), "dp.safetensors")
	m, err := model.New(model.Config{Arch: spec.DP, Layers: 1, Heads: 1, Width: 4, Context: 4, Vocab: 3, Norm: spec.PreLN, Dtype: spec.Float32, Std: 0.02}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Save(dp, []byte("abc"), nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "-ckpt is required"},
		{[]string{"-ckpt", filepath.Join(t.TempDir(), "missing")}, "missing"},
		{[]string{"-ckpt", dp}, "not invertible"},
		{[]string{"-ckpt", dp, "-spread", "1,x"}, "-spread"},
		{[]string{"-ckpt", dp, "-spread", "-1"}, "-spread"},
		{[]string{"-ckpt", dp, "-split", "train"}, "-split"},
		{[]string{"-ckpt", dp, "-tol", "0"}, "-tol"},
		{[]string{"-ckpt", dp, "-max-iter", "0"}, "-max-iter"},
		{[]string{"-ckpt", dp, "-plot", "x.gif"}, "-plot"},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), c.args, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one mentioning %q", c.args, err, c.want)
		}
	}
}

// TestInvertsTheScoredFunction: by default invert inverts the function eval scores, with
// the stored power-iteration vectors, and says so; with -power-iters it says that it
// refined the estimates and reports the scored function's certificate beside its own.
func TestInvertsTheScoredFunction(t *testing.T) {
	run1 := checkpoint(t, spec.InvertibleL2)
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-ckpt", run1, "-batch", "2", "-spread", "1"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "inverting the function eval scores") || strings.Contains(stdout.String(), "as scored") {
		t.Errorf("default: %s", stdout.String())
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"-ckpt", run1, "-batch", "2", "-spread", "1", "-power-iters", "50"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "after 50 more power iterations") || !strings.Contains(stdout.String(), "as scored: largest") {
		t.Errorf("-power-iters 50: %s", stdout.String())
	}
}
