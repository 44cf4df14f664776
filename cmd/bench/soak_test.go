package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"lipformer/bench"
)

func TestSoakBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-soak", "-1"}, {"-soak", "5", "-torch"}} {
		if _, err := parseFlags(args, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "-soak") {
			t.Errorf("%q: error %v, want one about -soak", args, err)
		}
	}
}

// TestSoakJSON soaks the toy configuration for a few steps and checks every field of the
// JSON reports, and that the table has a row per architecture.
func TestSoakJSON(t *testing.T) {
	const steps = 8
	var stdout, stderr bytes.Buffer
	args := []string{"-configs", "tiny", "-archs", "l2,invertible-l2", "-soak", "8", "-warmup-reps", "1", "-json"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), stdout.String())
	}
	for i, line := range lines {
		var r bench.SoakReport
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		arch := []string{"l2", "invertible-l2"}[i]
		if r.Impl != "go" || r.Mode != bench.ModeSoak || r.Config != "tiny" || r.Arch != arch || r.Dtype != "float32" ||
			r.Steps != steps || r.Warmup != 1 || r.Batch != 4 || r.Context != 16 || r.Params <= 0 || r.Threads < 1 ||
			r.Backend == "" || r.GoVersion == "" {
			t.Errorf("report %d: settings %+v", i, r)
		}
		if !(r.Seconds > 0) || math.Abs(r.MsPerStep-1e3*r.Seconds/steps) > 1e-9*r.MsPerStep || !(r.BytesPerStep > 0) || !(r.AllocsPerStep > 0) {
			t.Errorf("report %d: %.3g s, %.3g ms/step, %.0f bytes and %.0f allocs per step", i, r.Seconds, r.MsPerStep, r.BytesPerStep, r.AllocsPerStep)
		}
		var at []int
		for _, h := range r.Heap {
			at = append(at, h.Step)
			if h.HeapLive == 0 {
				t.Errorf("report %d: zero live heap at step %d", i, h.Step)
			}
		}
		if !slices.Equal(at, bench.SoakCheckpoints(steps)) {
			t.Errorf("report %d: heap read at steps %v, want %v", i, at, bench.SoakCheckpoints(steps))
		}
		if len(r.Heap) > 0 && (r.HeapLiveStart != r.Heap[0].HeapLive || r.HeapLiveEnd != r.Heap[len(r.Heap)-1].HeapLive ||
			r.HeapGrowth != int64(r.HeapLiveEnd)-int64(r.HeapLiveStart)) {
			t.Errorf("report %d: start %d, end %d, growth %d, heap %v", i, r.HeapLiveStart, r.HeapLiveEnd, r.HeapGrowth, r.Heap)
		}
		if !(r.LossStart > 0) || !(r.LossEnd > 0) || r.LossEnd >= r.LossStart {
			t.Errorf("report %d: loss %g -> %g, want a finite decrease (training on one batch)", i, r.LossStart, r.LossEnd)
		}
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"-configs", "tiny", "-archs", "dp", "-soak", "2", "-warmup-reps", "0"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	table := stdout.String()
	if !strings.Contains(table, "soak: 2 training steps") || !strings.Contains(table, "\ntiny dp ") {
		t.Errorf("table:\n%s", table)
	}
}
