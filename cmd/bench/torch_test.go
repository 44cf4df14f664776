package main

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"lipformer/bench"
)

// testRunner is the PyTorch reference as the tests run it (from cmd/bench), or a skip
// when Debian's Python cannot import torch.
func testRunner(t *testing.T) bench.Torch {
	t.Helper()
	r := bench.Torch{Python: "/usr/bin/python3", Script: "../../bench/torch_ref.py"}
	if err := r.Check(context.Background()); err != nil {
		t.Skipf("%v: install Debian's python3-torch to run the PyTorch cross-check", err)
	}
	return r
}

// TestTorchRunTimes runs the -torch path end to end with one timed step.
func TestTorchRunTimes(t *testing.T) {
	r := testRunner(t)
	args := []string{"-configs", "tiny", "-archs", "l2", "-modes", "train,eval", "-reps", "1", "-warmup-reps", "0", "-json",
		"-torch", "-torch-script", r.Script, "-python", r.Python, "-torch-threads", "1", "-torch-blas-threads", "1"}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	impls := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var rec struct {
			Impl string  `json:"impl"`
			GoMs float64 `json:"go_ms"`
			OK   bool    `json:"ok"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		impls[rec.Impl]++
		if rec.Impl == "loss-check" && !rec.OK {
			t.Errorf("loss check failed: %s", line)
		}
	}
	if want := map[string]int{"go": 2, "torch": 2, "compare": 2, "loss-check": 1}; !reflect.DeepEqual(impls, want) {
		t.Errorf("records %v, want %v:\n%s", impls, want, stdout.String())
	}
}
