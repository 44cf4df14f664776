package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lipformer/bench"
	"lipformer/kernel"
	"lipformer/spec"
	"lipformer/train"
)

func TestBadFlagsGiveClearErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-configs", "P1,P9"}, `unknown configuration "P9"`},
		{[]string{"-archs", "dp,rnn"}, `-archs: arch "rnn", want one of dp`},
		{[]string{"-modes", "train,infer"}, `-modes: "infer"`},
		{[]string{"-reps", "0"}, "-reps 0"},
		{[]string{"-sample-batch", "0"}, "-sample-batch 0"},
		{[]string{"-sample-window", "slide"}, `-sample-window "slide", want shift or none`},
		{[]string{"-torch", "-sample-batch", "4"}, "-sample-batch 4, want >= 1, and 1 with -torch"},
		{[]string{"-warmup-reps", "-1"}, "-warmup-reps -1"},
		{[]string{"-muon", "-1"}, "-muon -1"},
		{[]string{"-muon", "Inf"}, "-muon +Inf"},
		{[]string{"-dtype", "float16"}, "float16"},
		{[]string{"-loss-tol", "0"}, "-loss-tol"},
		{[]string{"-torch", "-torch-threads", "0"}, "-torch-threads 0"},
		{[]string{"-torch-omp-wait", "busy"}, "-torch-omp-wait"},
		{[]string{"-torch", "-torch-script", "/nonexistent/torch_ref.py", "-configs", "tiny"}, "/nonexistent/torch_ref.py"},
		{[]string{"-interleave", "-torch"}, "-interleave: not with -torch or -soak"},
		{[]string{"-interleave", "-soak", "3"}, "-interleave: not with -torch or -soak"},
		{[]string{"-power-iters", "0"}, "-power-iters 0"},
		{[]string{"-ckpt", "x", "-archs", "dp"}, "-archs with -ckpt"},
		{[]string{"-ckpt", "x", "-recipe", "-power-iters", "2"}, "-power-iters with -ckpt"},
		{[]string{"-data", "shakespeare"}, "-data and -data-dir: only with -ckpt"},
		{[]string{"-ckpt", "/nonexistent/run"}, "/nonexistent/run"},
		{[]string{"P1"}, "unexpected arguments"},
		{[]string{"-bogus"}, "bogus"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), c.args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}

func TestFlagDefaultsAndOrder(t *testing.T) {
	o, err := parseFlags([]string{"-modes", "sample,train", "-configs", "p2,tiny", "-archs", "l2,l2"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.plan.Modes, []string{"train", "sample"}) {
		t.Errorf("modes %v, want train before sample", o.plan.Modes)
	}
	if len(o.plan.Presets) != 2 || o.plan.Presets[0].Name != "P2" || o.plan.Presets[1].Name != "tiny" {
		t.Errorf("presets %v", o.plan.Presets)
	}
	if !slices.Equal(o.plan.Archs, []spec.Arch{spec.L2}) {
		t.Errorf("archs %v, want one l2", o.plan.Archs)
	}
	d, err := parseFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.plan.Presets) != 3 || !slices.Equal(d.plan.Archs, []spec.Arch{spec.DP, spec.L2, spec.InvertibleL2}) || d.plan.Set.Dtype != spec.Float32 {
		t.Errorf("defaults: %d presets, archs %v, dtype %s", len(d.plan.Presets), d.plan.Archs, d.plan.Set.Dtype)
	}
}

// TestJSONSmoke runs one timed step of every mode on the toy configuration and checks the
// JSON records.
func TestJSONSmoke(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"-configs", "tiny", "-archs", "dp,invertible-l2", "-reps", "1", "-warmup-reps", "0", "-json"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want 6:\n%s", len(lines), stdout.String())
	}
	for i, line := range lines {
		var r bench.Measurement
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		wantMode := bench.Modes()[i%3]
		if r.Impl != "go" || r.Config != "tiny" || r.Mode != wantMode || r.Backend != kernel.Backend || r.Steps != 1 {
			t.Errorf("record %d: %+v", i, r)
		}
		if !(r.MsMedian > 0) || !(r.GFLOP > 0) || !(r.TokensPerS > 0) || !(r.BytesPerStep > 0) || r.HeapLiveEnd == 0 {
			t.Errorf("record %d has an empty measurement: %+v", i, r)
		}
		if (r.Mode == bench.ModeTrain) != (r.SpeedupVsTrain == 0) {
			t.Errorf("record %d: speedup over train %v", i, r.SpeedupVsTrain)
		}
		if r.Mode == bench.ModeSample && (r.Batch != 1 || r.Positions != 4*16 || r.Generated != 4*8 || r.Window != "shift" ||
			!(r.NsPerGenerated > 0) || math.Abs(r.NsPerGenerated-2*r.NsPerToken) > 1e-6*r.NsPerGenerated) {
			t.Errorf("sample record: batch %d, %d positions and %d tokens per run (want 1, 64 and 32: 4 cycles of window shift at T = 16), "+
				"window %q, %v ns per generated token and %v per position", r.Batch, r.Positions, r.Generated, r.Window, r.NsPerGenerated, r.NsPerToken)
		}
		if r.Mode != bench.ModeSample && !(r.Loss > 0) {
			t.Errorf("record %d: loss %v", i, r.Loss)
		}
		if want := train.DefaultOptions().PowerIters; r.Mode == bench.ModeTrain && r.PowerIters != want {
			t.Errorf("record %d: %d power iterations per training step, want a run's %d", i, r.PowerIters, want)
		}
	}
	stdout.Reset()
	prof, tr := filepath.Join(t.TempDir(), "cpu.prof"), filepath.Join(t.TempDir(), "run.trace")
	if err := run(context.Background(), []string{"-configs", "tiny", "-archs", "l2", "-modes", "eval", "-reps", "1", "-warmup-reps", "0", "-cpuprofile", prof, "-trace", tr}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if out := stdout.String(); !strings.Contains(out, "BLAS "+kernel.Backend) || !strings.Contains(out, "tiny l2") {
		t.Errorf("table:\n%s", out)
	}
	if b, err := os.ReadFile(prof); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("-cpuprofile wrote no gzipped profile: %d bytes, %v", len(b), err)
	}
	if b, err := os.ReadFile(tr); err != nil || !bytes.HasPrefix(b, []byte("go 1.")) || !bytes.Contains(b[:16], []byte(" trace")) {
		t.Errorf("-trace wrote no execution trace: %d bytes, %v", len(b), err)
	}
}

// TestSampleBatch: -sample-batch 3 times three sequences in step, counting the tokens of all.
func TestSampleBatch(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"-configs", "tiny", "-archs", "l2", "-modes", "sample", "-sample-batch", "3", "-reps", "1", "-warmup-reps", "0", "-json"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var r bench.Measurement
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &r); err != nil {
		t.Fatal(err)
	}
	if r.Batch != 3 || r.Generated != 3*4*8 || r.Positions != 3*4*16 || !(r.NsPerGenerated > 0) {
		t.Errorf("batch %d, %d tokens and %d positions per run (want 3, 96 and 192), %v ns per token", r.Batch, r.Generated, r.Positions, r.NsPerGenerated)
	}
	stdout.Reset()
	if err := run(context.Background(), append(args, "-sample-window", "none"), &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &r); err != nil {
		t.Fatal(err)
	}
	if r.Generated != 3*16 || r.Positions != 3*16 || r.Window != "none" {
		t.Errorf("-sample-window none: %d tokens and %d positions per run, window %q (want 48, 48, none: T per sequence)", r.Generated, r.Positions, r.Window)
	}
}
