package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lipformer/expressive"
)

func TestFlagErrorsNameTheFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"-L", "16,x"}, "-L"},
		{[]string{"-k", "0"}, "-k"},
		{[]string{"-method", "sgd"}, "-method"},
		{[]string{"-eps", "1.5"}, "-eps"},
		{[]string{"-delta", "1"}, "-delta"},
		{[]string{"-trials", "0"}, "-trials"},
		{[]string{"-range", "0.5"}, "-range"},
		{[]string{"-margin", "-1"}, "-margin"},
		{[]string{"-margin", "auto"}, "-margin"},
		{[]string{"-margin", "fixed"}, "-margin"},
		{[]string{"-d-max", "0"}, "-d-max"},
		{[]string{"-gd-lr", "0"}, "-gd-lr"},
		{[]string{"-gd-d-start", "0"}, "-gd-d-start"},
		{[]string{"-gd-d-start", "9", "-gd-d-max", "8"}, "-gd-d-start"},
		{[]string{"-gd-search", "binary"}, "-gd-search"},
		{[]string{"-plot", "x.jpg"}, "-plot"},
		{[]string{"-in", "/nonexistent.jsonl"}, "-in"},
	} {
		var stderr bytes.Buffer
		err := run(c.args, &bytes.Buffer{}, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%v: error %v, want one naming %s", c.args, err, c.flag)
		}
	}
}

// The search flags set the search over d of each method: jl from 1 to -d-max, gd from
// -gd-d-start to -gd-d-max, walking with -gd-search walk. (The walk itself is tested in
// package expressive.)
func TestSearchFlags(t *testing.T) {
	c, err := parseFlags([]string{"-d-max", "64", "-rel-tol", "0.5", "-gd-search", "walk", "-gd-d-start", "3", "-gd-d-max", "9", "-gd-rel-tol", "0.2"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if want := (expressive.SearchOptions{Start: 1, Max: 64, RelTol: 0.5}); c.exp.Search(expressive.MethodJL) != want {
		t.Errorf("jl search %+v, want %+v", c.exp.Search(expressive.MethodJL), want)
	}
	if want := (expressive.SearchOptions{Start: 3, Max: 9, RelTol: 0.2, Walk: true}); c.exp.Search(expressive.MethodGD) != want {
		t.Errorf("gd search %+v, want %+v", c.exp.Search(expressive.MethodGD), want)
	}
	if c, err = parseFlags(nil, &bytes.Buffer{}); err != nil || c.exp.Search(expressive.MethodGD).Walk {
		t.Errorf("default gd search %+v (%v), want doubling", c.exp.Search(expressive.MethodGD), err)
	}
}

// -margin is target by default, cell, or a fixed number.
func TestMarginFlag(t *testing.T) {
	for _, c := range []struct {
		args   []string
		mode   expressive.MarginMode
		margin float64
	}{
		{nil, expressive.MarginTarget, 0},
		{[]string{"-margin", "target"}, expressive.MarginTarget, 0},
		{[]string{"-margin", "cell"}, expressive.MarginCell, 0},
		{[]string{"-margin", "0.5"}, expressive.MarginFixed, 0.5},
		{[]string{"-margin", "0"}, expressive.MarginFixed, 0},
	} {
		cfg, err := parseFlags(c.args, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.exp.Margins != c.mode || cfg.exp.Margin != c.margin {
			t.Errorf("%v: margin %v %v, want %v %v", c.args, cfg.exp.Margins, cfg.exp.Margin, c.mode, c.margin)
		}
	}
}

// A small run writes a JSON line per cell plus fits, a CSV and a plot, and -in on its JSON
// reproduces the same cells.
func TestRunSmallAndReread(t *testing.T) {
	dir := t.TempDir()
	jsonPath, csvPath, plotPath := filepath.Join(dir, "e.jsonl"), filepath.Join(dir, "e.csv"), filepath.Join(dir, "e.svg")
	var stdout, stderr bytes.Buffer
	args := []string{"-L", "8,16,32", "-k", "1", "-method", "jl,gd", "-trials", "3", "-gd-L-max", "16",
		"-json", "-csv", csvPath, "-plot", plotPath}
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	cells, fits := countRecords(t, stdout.String())
	if cells != 5 || fits != 4 {
		t.Fatalf("%d cell and %d fit lines, want 5 (3 jl + 2 gd) and 4", cells, fits)
	}
	if !strings.Contains(stderr.String(), "fit d = a + b log L") {
		t.Fatalf("human table missing from stderr:\n%s", stderr.String())
	}
	csvData, err := os.ReadFile(csvPath)
	if err != nil || strings.Count(string(csvData), "\n") != 6 {
		t.Fatalf("CSV: %v\n%s", err, csvData)
	}
	if fi, err := os.Stat(plotPath); err != nil || fi.Size() == 0 {
		t.Fatalf("plot not written: %v", err)
	}
	if err := os.WriteFile(jsonPath, stdout.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := run([]string{"-in", jsonPath, "-json"}, &again, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if again.String() != stdout.String() {
		t.Fatalf("-in did not reproduce the records:\n%s\nvs\n%s", again.String(), stdout.String())
	}
}

func countRecords(t *testing.T, s string) (cells, fits int) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		var rec struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("bad JSON line %q: %v", sc.Text(), err)
		}
		switch rec.Type {
		case "cell":
			cells++
		case "fit":
			fits++
		}
	}
	return cells, fits
}
