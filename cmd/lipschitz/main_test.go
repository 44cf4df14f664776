package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lipformer/data"
	"lipformer/model"
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
		{[]string{"-plot", "x.jpg"}, "-plot"},
	} {
		err := run(c.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%v: error %v, want one naming %s", c.args, err, c.flag)
		}
	}
}

// records parses the JSON lines of a run.
func records(t *testing.T, out string) []record {
	t.Helper()
	var recs []record
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("bad JSON line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs
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

// A small L2 run writes a JSON line per N with the lower bound below the
// upper bound, the table and fits to stderr, a CSV and a plot.
func TestRunL2(t *testing.T) {
	dir := t.TempDir()
	csvPath, plotPath := filepath.Join(dir, "l2.csv"), filepath.Join(dir, "l2.svg")
	stdout, stderr := mustRun(t, "-n", "2,4,8", "-inits", "3", "-steps", "20", "-json", "-csv", csvPath, "-plot", plotPath)
	recs := records(t, stdout)
	if len(recs) != 3 {
		t.Fatalf("%d JSON lines, want 3", len(recs))
	}
	for _, r := range recs {
		if r.Upper == nil || r.Ratio == nil || !(r.Lower > 0) || r.Lower > *r.Upper || r.Engine != "scalar" {
			t.Errorf("N=%d: record %+v: want 0 < lower <= upper from the scalar engine", r.N, r)
		}
		if math.Abs(*r.Ratio - r.Lower / *r.Upper) > 1e-15 || r.UpperAsStated != nil {
			t.Errorf("N=%d: ratio %v, upper as stated %v", r.N, *r.Ratio, r.UpperAsStated)
		}
		if !(r.Construction > 0) || r.Construction > *r.Upper || !(r.ConstructionT > 0) {
			t.Errorf("N=%d: construction %v at t = %v, want in (0, upper %v]", r.N, r.Construction, r.ConstructionT, *r.Upper)
		}
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
}

// A DP run in boxes has no upper bound, reports the construction and the
// growth exponents in R, and plots against R.
func TestRunDP(t *testing.T) {
	plotPath := filepath.Join(t.TempDir(), "dp.png")
	stdout, stderr := mustRun(t, "-attn", "dp", "-n", "3,5", "-radius", "1,4", "-inits", "3", "-steps", "30", "-json", "-plot", plotPath)
	recs := records(t, stdout)
	if len(recs) != 4 {
		t.Fatalf("%d JSON lines, want 4", len(recs))
	}
	for i, r := range recs {
		if r.Upper != nil || r.Ratio != nil || !(r.Lower > 0) || r.Radius != []float64{1, 4}[i%2] {
			t.Errorf("record %+v: want no upper bound, lower > 0", r)
		}
		if !(r.Construction > 0) || !(r.ConstructionT > 0 && r.ConstructionT <= r.Radius) {
			t.Errorf("N=%d R=%v: construction %v at t = %v, want > 0 with t in the box", r.N, r.Radius, r.Construction, r.ConstructionT)
		}
		if r.WarmStart != (i%2 == 1) {
			t.Errorf("N=%d R=%v: warm start %v", r.N, r.Radius, r.WarmStart)
		}
	}
	if !strings.Contains(stderr, "local exponents") {
		t.Errorf("growth exponents missing from stderr:\n%s", stderr)
	}
	if info, err := os.Stat(plotPath); err != nil || info.Size() == 0 {
		t.Errorf("plot: %v", err)
	}
}

// The graph engine and the closed form give the same search on a D = 1 layer;
// a D = 4 run with random weights and the 2-norm uses the graph and reports
// [K]'s 2-norm formula next to the corrected bound.
func TestRunEngines(t *testing.T) {
	args := []string{"-n", "5", "-inits", "2", "-steps", "10", "-json", "-causal"}
	scalar, _ := mustRun(t, append(args, "-engine", "scalar")...)
	graph, _ := mustRun(t, append(args, "-engine", "graph")...)
	s, g := records(t, scalar)[0], records(t, graph)[0]
	if s.Engine != "scalar" || g.Engine != "graph" || math.Abs(s.Lower-g.Lower) > 1e-9*s.Lower {
		t.Errorf("scalar %s %.15g, graph %s %.15g", s.Engine, s.Lower, g.Engine, g.Lower)
	}
	out, _ := mustRun(t, "-d", "4", "-heads", "2", "-weights", "random", "-norm", "2", "-n", "3", "-inits", "2", "-steps", "5", "-json", "-workers", "2")
	r := records(t, out)[0]
	if r.Engine != "graph" || r.Norm != "2" || r.UpperAsStated == nil || r.Upper == nil || r.Lower > *r.Upper {
		t.Errorf("D=4 2-norm record %+v", r)
	}
}

func TestCertifyCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "text.txt")
	os.WriteFile(path, []byte(strings.Repeat("to be or not to be. ", 100)), 0o644)
	c, err := data.Load(context.Background(), path, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"l2", "dp"} {
		m, err := model.New(model.Config{Arch: arch, Layers: 1, Heads: 1, Width: 8, Context: 8, Vocab: c.Vocab.Size(), Norm: "pre", Dtype: "float32", Std: 0.02}, 1)
		if err != nil {
			t.Fatal(err)
		}
		opt := train.DefaultOptions()
		opt.Data, opt.Steps, opt.Batch, opt.Warmup, opt.EvalEvery = path, 2, 2, 0, 2
		out := t.TempDir()
		r := &train.Run{Model: m, Corpus: c, Opt: opt, Out: out, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Certify: true}
		sum, err := r.Train(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		if err := run([]string{"-ckpt", out, "-json"}, &stdout, &stderr); err != nil {
			t.Fatal(err)
		}
		var cert struct {
			Inf     *float64 `json:"product_inf"`
			Factors []struct{ Name string }
		}
		if err := json.Unmarshal(stdout.Bytes(), &cert); err != nil {
			t.Fatal(err)
		}
		if len(cert.Factors) != 4 || (arch == "dp") != (cert.Inf == nil) {
			t.Fatalf("%s: certificate %s", arch, stdout.String())
		}
		if arch == "l2" && math.Abs(*cert.Inf-float64(sum.Certificate.Inf)) > 1e-6**cert.Inf {
			t.Errorf("certificate %v differs from the training summary's %v", *cert.Inf, sum.Certificate.Inf)
		}
		if arch != "l2" {
			continue
		}
		stdout.Reset()
		if err := run([]string{"-ckpt", out, "-json", "-search-n", "4", "-inits", "2", "-steps", "10"}, &stdout, &stderr); err != nil {
			t.Fatal(err)
		}
		var loose struct {
			Attention []struct {
				Name        string
				Lower       *struct{ Inf, Token2 float64 }
				CertInfAtN  float64 `json:"certified_inf_at_n"`
				CertTok2AtN float64 `json:"certified_token2_at_n"`
			}
		}
		if err := json.Unmarshal(stdout.Bytes(), &loose); err != nil {
			t.Fatal(err)
		}
		if len(loose.Attention) != 1 || loose.Attention[0].Lower == nil {
			t.Fatalf("looseness %s", stdout.String())
		}
		a := loose.Attention[0]
		if !(a.Lower.Inf > 0) || a.Lower.Inf > a.CertInfAtN || !(a.Lower.Token2 > 0) || a.Lower.Token2 > a.CertTok2AtN {
			t.Errorf("%s: lower bounds %+v against certified %v (inf) and %v (token2)", a.Name, *a.Lower, a.CertInfAtN, a.CertTok2AtN)
		}
		stdout.Reset()
		if err := run([]string{"-ckpt", out, "-search-n", "4", "-inits", "1", "-steps", "5"}, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "token2 looseness") {
			t.Errorf("table: %v\n%s", err, stdout.String())
		}
	}
}
