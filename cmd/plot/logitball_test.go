package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlotLogitBall: -logit-ball draws a bounded model at its certified radius named by its
// run and score, the floor and bounded curves over every radius of the files, a model
// with no certified radius and the n-gram baselines as lines; files of two splits, files
// with no radius, a missing file, a model with no certified radius in a "+" series and
// -logit-ball with another plot are refused naming the problem; files joined by "+" are
// one series named by all their runs.
func TestPlotLogitBall(t *testing.T) {
	dir := t.TempDir()
	k10 := filepath.Join(dir, "k10.json")
	writeFile(t, k10, `{"checkpoint": "runs/shk-k10/ckpt.safetensors", "split": "valid", "bpc": 3.64,
		"baselines": [{"order": 2, "bpc": 3.58}],
		"logit_ball": [{"radius": 10, "certified": true, "floor_bpc": 0.002, "bounded": [{"order": 2, "bpc": 3.61}, {"order": 3, "bpc": 2.99}]},
			{"radius": 2, "certified": false, "floor_bpc": 2.24, "bounded": [{"order": 2, "bpc": 4.19}, {"order": 3, "bpc": 3.86}]}]}`)
	dp := filepath.Join(dir, "dp.json")
	writeFile(t, dp, `{"checkpoint": "runs/shk-dp/ckpt.safetensors", "split": "valid", "bpc": 2.32}`)
	out := filepath.Join(dir, "ball.svg")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-logit-ball", k10 + "," + dp, "-out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "4 series, 2 reference line(s)") {
		t.Errorf("stdout %q, want the model, the floor and two bounded curves, and two lines", stdout.String())
	}
	svg, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"shk-k10 3.640", "floor: no model", "bounded bigram", "bounded trigram", "shk-dp (no certified radius) 2.320", "bigram (Kneser-Ney) 3.580", "logit radius"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("%s lacks %q", out, want)
		}
	}
	k2 := filepath.Join(dir, "k2.json")
	writeFile(t, k2, `{"checkpoint": "runs/shk-k2/ckpt.safetensors", "split": "valid", "bpc": 4.29,
		"logit_ball": [{"radius": 2, "certified": true, "floor_bpc": 2.24, "bounded": [{"order": 2, "bpc": 4.19}, {"order": 3, "bpc": 3.86}]}]}`)
	stdout.Reset()
	if err := run([]string{"-logit-ball", k10 + "+" + k2 + "," + dp, "-out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "4 series, 2 reference line(s)") {
		t.Errorf("stdout %q, want the two models as one series, the floor and two bounded curves, and two lines", stdout.String())
	}
	if svg, err = os.ReadFile(out); err != nil || !strings.Contains(string(svg), "shk-k2 4.290, shk-k10 3.640") {
		t.Errorf("%s lacks the series named by its runs in the order of their radii (%v)", out, err)
	}
	test := filepath.Join(dir, "test.json")
	writeFile(t, test, `{"checkpoint": "runs/x/ckpt.safetensors", "split": "test", "bpc": 3}`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-logit-ball", k10 + "," + test, "-out", out}, "scores the test split"},
		{[]string{"-logit-ball", dp, "-out", out}, "no file holds a logit radius"},
		{[]string{"-logit-ball", k10 + "+" + dp, "-out", out}, "dp.json has no certified radius"},
		{[]string{"-logit-ball", filepath.Join(dir, "missing.json"), "-out", out}, "missing.json"},
		{[]string{"-logit-ball", k10, "-runs", dir, "-out", out}, "give one"},
		{[]string{"-logit-ball", k10, "-out", filepath.Join(dir, "ball.gif")}, "-out"},
	} {
		if err := run(c.args, &stdout, &stderr); err == nil || !contains(err, c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}
