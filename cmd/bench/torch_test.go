package main

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
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

// TestTorchRunTimes runs the -torch path end to end with one timed step: for l2, and
// for the certified recipes of contractive-l2 and invertible-l2 (-recipe), whose every
// record, Go's and PyTorch's, is named arch+recipe, and for the invertible recipe trained
// with Muon (-muon), named arch+recipe+muon.
func TestTorchRunTimes(t *testing.T) {
	r := testRunner(t)
	for _, c := range []struct {
		args  []string
		archs []string // the records' architectures
		want  map[string]int
	}{
		{[]string{"-archs", "l2", "-modes", "train,eval"}, []string{"l2"},
			map[string]int{"go": 2, "torch": 2, "compare": 2, "loss-check": 1}},
		{[]string{"-archs", "contractive-l2,invertible-l2", "-modes", "train", "-recipe"}, []string{"contractive-l2+recipe", "invertible-l2+recipe"},
			map[string]int{"go": 2, "torch": 2, "compare": 2, "loss-check": 2}},
		{[]string{"-archs", "invertible-l2", "-modes", "train", "-recipe", "-muon", "10"}, []string{"invertible-l2+recipe+muon"},
			map[string]int{"go": 1, "torch": 1, "compare": 1, "loss-check": 1}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			args := append([]string{"-configs", "tiny", "-reps", "1", "-warmup-reps", "0", "-json",
				"-torch", "-torch-script", r.Script, "-python", r.Python, "-torch-threads", "1", "-torch-blas-threads", "1"}, c.args...)
			var stdout, stderr bytes.Buffer
			if err := run(context.Background(), args, &stdout, &stderr); err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			impls := map[string]int{}
			for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
				var rec struct {
					Impl string `json:"impl"`
					Arch string `json:"arch"`
					OK   bool   `json:"ok"`
				}
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				impls[rec.Impl]++
				if rec.Impl == "loss-check" && !rec.OK {
					t.Errorf("loss check failed: %s", line)
				}
				if !slices.Contains(c.archs, rec.Arch) {
					t.Errorf("a record of arch %q, want one of %v: %s", rec.Arch, c.archs, line)
				}
			}
			if !reflect.DeepEqual(impls, c.want) {
				t.Errorf("records %v, want %v:\n%s", impls, c.want, stdout.String())
			}
		})
	}
}
