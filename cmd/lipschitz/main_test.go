package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lipformer/data"
	"lipformer/internal/runtest"
	"lipformer/model"
	"lipformer/spec"
	"lipformer/train"
)

func TestFlagErrorsNameTheFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"-attn", "l3"}, "-attn"},
		{[]string{"-n", "4,x"}, "-n"},
		{[]string{"-n", "0"}, "-n"},
		{[]string{"-d", "0"}, "-d"},
		{[]string{"-d", "4", "-heads", "3"}, "-heads"},
		{[]string{"-weights", "ones"}, "-weights"},
		{[]string{"-engine", "gpu"}, "-engine"},
		{[]string{"-engine", "scalar", "-d", "2"}, "-engine"},
		{[]string{"-inits", "0"}, "-inits"},
		{[]string{"-steps", "-1"}, "-steps"},
		{[]string{"-lr", "0"}, "-lr"},
		{[]string{"-lr-final", "2"}, "-lr-final"},
		{[]string{"-radius", "1,-2"}, "-radius"},
		{[]string{"-attn", "dp", "-radius", "0,1"}, "-radius"},
		{[]string{"-norm", "1"}, "-norm"},
		{[]string{"-init-min", "0"}, "-init-min"},
		{[]string{"-init-max", "0.1"}, "-init-max"},
		{[]string{"-workers", "0"}, "-workers"},
		{[]string{"-escape", "-1"}, "-escape"},
		{[]string{"-restarts", "-2"}, "-restarts"},
		{[]string{"-perturb", "0"}, "-perturb"},
		{[]string{"-d", "2,4", "-heads", "3"}, "-heads"},
		{[]string{"-plot", "x.jpg"}, "-plot"},
	} {
		err := run(c.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%v: error %v, want one naming %s", c.args, err, c.flag)
		}
	}
}

// countLines returns the number of JSON objects in out, failing on any other line.
func countLines(t *testing.T, out string) int {
	t.Helper()
	n := 0
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("bad JSON line %q: %v", sc.Text(), err)
		}
		n++
	}
	return n
}

// mustRun runs the command and returns its stdout and stderr.
func mustRun(t *testing.T, args ...string) (string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stderr.String())
	}
	return stdout.String(), stderr.String()
}

// -json writes a JSON line per N to stdout and the table and fits to stderr; -csv and
// -plot write their files. (The experiment itself is tested in lipschitz/tightness.)
func TestRunOutputs(t *testing.T) {
	dir := t.TempDir()
	csvPath, plotPath := filepath.Join(dir, "l2.csv"), filepath.Join(dir, "l2.svg")
	stdout, stderr := mustRun(t, "-n", "2,4,8", "-inits", "2", "-steps", "5", "-json", "-csv", csvPath, "-plot", plotPath)
	if n := countLines(t, stdout); n != 3 {
		t.Fatalf("%d JSON lines, want 3", n)
	}
	if !strings.Contains(stderr, "W0((N-1)/e)") || !strings.Contains(stderr, "log N - log log N") {
		t.Errorf("table or fits missing from stderr:\n%s", stderr)
	}
	if data, err := os.ReadFile(csvPath); err != nil || strings.Count(string(data), "\n") != 4 {
		t.Errorf("CSV: %v\n%s", err, data)
	}
	if data, err := os.ReadFile(plotPath); err != nil || !bytes.Contains(data, []byte("<svg")) {
		t.Errorf("plot: %v", err)
	}
	stdout, _ = mustRun(t, "-attn", "dp", "-n", "3", "-radius", "1,4", "-inits", "2", "-steps", "5")
	if !strings.Contains(stdout, "local exponents") {
		t.Errorf("table without -json not on stdout:\n%s", stdout)
	}
}

// With lists in -d and -heads every pair with H dividing D is run, and the table of ratios
// and the plot against D are written; -records writes the same table from the JSON records.
func TestRunShapes(t *testing.T) {
	dir := t.TempDir()
	plotPath, recPath := filepath.Join(dir, "shapes.png"), filepath.Join(dir, "shapes.jsonl")
	stdout, stderr := mustRun(t, "-d", "1,2", "-heads", "1,2", "-weights", "random", "-n", "3", "-inits", "1", "-steps", "4",
		"-construction=false", "-plot", plotPath, "-json")
	if !strings.Contains(stderr, "lower/product") || strings.Count(stderr, "\n") != 4 || countLines(t, stdout) != 3 {
		t.Errorf("want the shape table with 3 rows and 3 records:\n%s\n%s", stderr, stdout)
	}
	if info, err := os.Stat(plotPath); err != nil || info.Size() == 0 {
		t.Errorf("plot: %v", err)
	}
	if err := os.WriteFile(recPath, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if again, _ := mustRun(t, "-records", recPath); again != stderr {
		t.Errorf("-records table:\n%s\nwant\n%s", again, stderr)
	}
}

// -ckpt prints the certificate of a trained run directory as JSON (-json) or tables, with
// the looseness columns under -search-n. (Certify is tested in lipschitz/tightness.)
func TestCertifyCheckpoint(t *testing.T) {
	path := runtest.TextFile(t, strings.Repeat("to be or not to be. ", 100))
	opt := train.DefaultOptions()
	opt.Steps, opt.Batch, opt.Warmup, opt.EvalEvery = 2, 2, 0, 2
	out := runtest.Train(t, path, data.Options{}, model.Config{Arch: spec.L2, Layers: 1, Heads: 1, Width: 8, Context: 8, Norm: spec.PreLN, Dtype: spec.Float32, Std: 0.02},
		opt, t.TempDir())
	stdout, _ := mustRun(t, "-ckpt", out, "-json", "-search-n", "4", "-inits", "2", "-steps", "10")
	var cert struct {
		Inf       *float64                `json:"product_inf"`
		Tok2      float64                 `json:"product_tok2"`
		Whole     *struct{ Best float64 } `json:"whole_lower"`
		Looseness float64                 `json:"whole_looseness"`
		Factors   []struct{ Name string }
		Attention []struct {
			Lower *struct{ Inf, Token2 float64 }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &cert); err != nil {
		t.Fatal(err)
	}
	if len(cert.Factors) != 4 || cert.Inf == nil || len(cert.Attention) != 1 || cert.Attention[0].Lower == nil {
		t.Fatalf("certificate %s", stdout)
	}
	if cert.Whole == nil || !(cert.Whole.Best > 0) || cert.Whole.Best > cert.Tok2 || math.Abs(cert.Looseness-cert.Tok2/cert.Whole.Best) > 1e-9*cert.Looseness {
		t.Errorf("whole model: lower bound %+v, looseness %v, certified %v; want the ratio certified / lower", cert.Whole, cert.Looseness, cert.Tok2)
	}
	if stdout, _ = mustRun(t, "-ckpt", out, "-search-n", "4", "-inits", "1", "-steps", "5"); !strings.Contains(stdout, "token2 looseness") {
		t.Errorf("table:\n%s", stdout)
	}
}
