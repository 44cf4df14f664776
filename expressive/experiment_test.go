package expressive

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// smallExperiment is cmd/expressive's default experiment on the lengths Ls with k = 1
// and 3 trials.
func smallExperiment(methods []string, Ls ...int) Experiment {
	return Experiment{Methods: methods, Ks: []int{1}, Ls: Ls, Trials: 3, Eps: 0.1, Delta: 0.1, Range: 10,
		Margin: DefaultMargin, GD: DefaultGDOptions(0.1), GDLMax: 256, Seed: 1,
		JLSearch: SearchOptions{Start: 1, Max: 1 << 20}, GDSearch: SearchOptions{Start: 1, Max: 1024, RelTol: 0.1}}
}

// A gd search with Walk tries d in steps of 1 from its start.
func TestExperimentGDWalk(t *testing.T) {
	e := smallExperiment([]string{MethodGD}, 8)
	e.GDSearch.Walk, e.GDSearch.Start = true, 3
	groups, err := e.Run(Progress{})
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 1 || len(groups[0].Results) != 1 {
		t.Fatalf("groups %+v, want one cell", groups)
	}
	sr := groups[0].Results[0].Search
	if len(sr.Tried) < 2 || sr.Tried[0].D != 3 {
		t.Fatalf("tried %+v, want a walk from d = 3", sr.Tried)
	}
	for i := 1; i < len(sr.Tried); i++ {
		if step := sr.Tried[i].D - sr.Tried[i-1].D; step != 1 && step != -1 {
			t.Fatalf("tried %+v: a step of %d", sr.Tried, step)
		}
	}
	last, want := sr.Tried[len(sr.Tried)-1], 0
	if last.Pass {
		want = last.D // walked up to the first pass, or down to d = 1
	} else {
		want = last.D + 1 // walked down to the first failure
	}
	if sr.D != want {
		t.Fatalf("d_min %d after tried %+v", sr.D, sr.Tried)
	}
}

// A small run gives a result per cell grouped by (method, k) and fitted, streamed as it
// goes; the table, CSV and plot are written; and ReadCells on the cells' JSON lines
// reproduces the same groups.
func TestExperimentRunAndReread(t *testing.T) {
	e := smallExperiment([]string{MethodJL, MethodGD}, 8, 16, 32)
	e.GDLMax = 16
	var lines bytes.Buffer
	enc := json.NewEncoder(&lines)
	var tried int
	groups, err := e.Run(Progress{Tried: func(Cell, DResult) { tried++ }, Done: func(r CellResult) error { return enc.Encode(r.Record()) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 2 || len(groups[0].Results) != 3 || len(groups[1].Results) != 2 || !groups[0].Fitted || !groups[1].Fitted {
		t.Fatalf("%d groups, want 2 fitted: 3 jl and 2 gd cells", len(groups))
	}
	if n := strings.Count(lines.String(), "\n"); n != 5 || tried == 0 {
		t.Fatalf("%d cells streamed, %d d reported, want 5 and some", n, tried)
	}
	var table bytes.Buffer
	WriteTable(&table, groups)
	if !strings.Contains(table.String(), "fit d = a + b log L") {
		t.Fatalf("table without the fits:\n%s", table.String())
	}
	var csv bytes.Buffer
	if err := WriteCSV(&csv, groups); err != nil || strings.Count(csv.String(), "\n") != 6 {
		t.Fatalf("CSV: %v\n%s", err, csv.String())
	}
	dir := t.TempDir()
	plotPath, jsonPath := filepath.Join(dir, "e.svg"), filepath.Join(dir, "e.jsonl")
	if err := SavePlot(plotPath, groups); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(plotPath); err != nil || fi.Size() == 0 {
		t.Fatalf("plot not written: %v", err)
	}
	if err := os.WriteFile(jsonPath, lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := ReadCells([]string{jsonPath})
	if err != nil {
		t.Fatal(err)
	}
	var reread bytes.Buffer
	enc = json.NewEncoder(&reread)
	for _, g := range again {
		for _, r := range g.Results {
			if err := enc.Encode(r.Record()); err != nil {
				t.Fatal(err)
			}
		}
		if !g.Fitted {
			t.Errorf("%s k=%d: reread group not fitted", g.Method, g.K)
		}
	}
	if reread.String() != lines.String() {
		t.Fatalf("ReadCells did not reproduce the records:\n%s\nvs\n%s", reread.String(), lines.String())
	}
}

func TestExperimentErrors(t *testing.T) {
	e := smallExperiment([]string{MethodGD}, 64)
	e.GDLMax = 16
	if _, err := e.Run(Progress{}); err == nil {
		t.Error("no cell to run gave no error")
	}
	if _, err := ReadCells([]string{filepath.Join(t.TempDir(), "none.jsonl")}); err == nil {
		t.Error("a missing file gave no error")
	}
	path := filepath.Join(t.TempDir(), "fits.jsonl")
	os.WriteFile(path, []byte(`{"type":"fit"}`+"\n"), 0o644)
	if _, err := ReadCells([]string{path}); err == nil {
		t.Error("a file without cells gave no error")
	}
}

// Cells of different jl margins stay in separate groups when read back, and a record of
// before the margin modes (no margin_mode, no margin per d) reads as a fixed margin.
func TestReadCellsKeepsMarginsApart(t *testing.T) {
	var lines bytes.Buffer
	enc := json.NewEncoder(&lines)
	for _, mode := range []MarginMode{MarginFixed, MarginTarget} {
		e := smallExperiment([]string{MethodJL}, 8, 16)
		e.Margins = mode
		if _, err := e.Run(Progress{Done: func(r CellResult) error { return enc.Encode(r.Record()) }}); err != nil {
			t.Fatal(err)
		}
	}
	old := `{"type":"cell","method":"jl","L":8,"k":2,"eps":0.1,"delta":0.1,"trials":3,"range":10,"margin":1,"seed":1,"found":true,"d_min":5,"d_fail_below":4,"seconds":0,"tried":[{"d":5,"successes":3,"trials":3,"rate":1,"pass":true,"max_log_ratio":0,"max_log_leak":-3,"max_abs_logit":4}]}`
	lines.WriteString(old + "\n")
	path := filepath.Join(t.TempDir(), "m.jsonl")
	if err := os.WriteFile(path, lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	groups, err := ReadCells([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 3 || groups[0].Margin != "0.5" || groups[1].Margin != "target" || groups[2].Margin != "1" {
		t.Fatalf("groups %+v, want margins 0.5, target and 1", groups)
	}
	for _, g := range groups[:2] {
		if len(g.Results) != 2 || !g.Fitted {
			t.Fatalf("group %s: %d cells, fitted %v, want 2 fitted", g.Name(), len(g.Results), g.Fitted)
		}
	}
	r := groups[2].Results[0]
	if d := r.Search.Tried[0]; r.Cell.Margins != MarginFixed || d.Margin != 1 || d.MarginLo != 1 || d.MarginHi != 1 || d.CommonSuccesses != 3 {
		t.Fatalf("old record read as %+v, %+v", r.Cell, d)
	}
}
