package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// -gd-search walk tries d in steps of 1 from -gd-d-start.
func TestGDWalk(t *testing.T) {
	var stdout bytes.Buffer
	args := []string{"-L", "8", "-k", "1", "-method", "gd", "-trials", "3", "-gd-search", "walk", "-gd-d-start", "3", "-json"}
	if err := run(args, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var cell struct {
		Type  string `json:"type"`
		DMin  int    `json:"d_min"`
		Tried []struct {
			D    int  `json:"d"`
			Pass bool `json:"pass"`
		} `json:"tried"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(stdout.String(), "\n", 2)[0]), &cell); err != nil || cell.Type != "cell" {
		t.Fatalf("first line %q: %v", stdout.String(), err)
	}
	if len(cell.Tried) < 2 || cell.Tried[0].D != 3 {
		t.Fatalf("tried %+v, want a walk from d = 3", cell.Tried)
	}
	for i := 1; i < len(cell.Tried); i++ {
		if step := cell.Tried[i].D - cell.Tried[i-1].D; step != 1 && step != -1 {
			t.Fatalf("tried %+v: a step of %d", cell.Tried, step)
		}
	}
	last, want := cell.Tried[len(cell.Tried)-1], 0
	if last.Pass {
		want = last.D // walked up to the first pass, or down to d = 1
	} else {
		want = last.D + 1 // walked down to the first failure
	}
	if cell.DMin != want {
		t.Fatalf("d_min %d after tried %+v", cell.DMin, cell.Tried)
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
