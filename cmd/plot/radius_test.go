package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lipformer/train"
)

// TestPlotRadius: -radius draws each eval output's per-class and K-alone fractions, named
// by run directory, certificate and split; a file without radii, a missing file and
// -radius with -runs are refused naming the problem.
func TestPlotRadius(t *testing.T) {
	dir := t.TempDir()
	rep := train.RadiusReport{Certificate: 10, Body: 6, Scored: 100,
		Points: []train.RadiusPoint{{R: 0.01, Certified: 0.9, CertifiedWhole: 0.8, CertifiedCorrect: 0.3}},
		Curve:  []train.RadiusPoint{{R: 0.001, Certified: 1, CertifiedWhole: 1}, {R: 0.1, Certified: 0.2, CertifiedWhole: 0.05}}}
	b, err := json.Marshal(map[string]any{"checkpoint": "runs/shk-k10/ckpt.safetensors", "split": "valid", "radius": rep})
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "k10.json")
	writeFile(t, good, string(b))
	out := filepath.Join(dir, "radius.svg")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-radius", good, "-out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	svg, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"shk-k10 (K = 10, valid), per class", "shk-k10 (K = 10, valid), from K alone", "certified at R"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("%s lacks %q", out, want)
		}
	}
	empty := filepath.Join(dir, "plain.json")
	writeFile(t, empty, `{"checkpoint": "runs/dp/ckpt.safetensors", "bpc": 2.5}`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-radius", empty, "-out", out}, "plain.json holds no certified radii"},
		{[]string{"-radius", filepath.Join(dir, "missing.json"), "-out", out}, "missing.json"},
		{[]string{"-radius", good, "-runs", dir, "-out", out}, "give one"},
		{[]string{"-radius", good, "-out", filepath.Join(dir, "radius.gif")}, "-out"},
	} {
		if err := run(c.args, &stdout, &stderr); err == nil || !contains(err, c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}
