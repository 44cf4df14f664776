package tightness

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lipformer/lipschitz/search"
	"lipformer/ops"
)

// defaults is the experiment of cmd/lipschitz's default flags on the lengths ns.
func defaults(ns ...int) Config {
	return Config{Kind: ops.L2, Ns: ns, Radii: []float64{0}, Dim: 1, Heads: 1, Weights: WeightsUnit, Engine: EngineAuto,
		Workers: 1, Warm: true, Search: search.Options{Norm: search.NormInf, Starts: 50, Steps: 200, LR: 0.03,
			LRFinal: search.DefaultLRFinal, InitMin: 0.2, InitMax: 2, Refresh: 5, Seed: 1}}
}

// mustRun runs c and returns its records.
func mustRun(t *testing.T, c Config) []Record {
	t.Helper()
	recs, err := Run(c, Progress{})
	if err != nil {
		t.Fatalf("%+v: %v", c, err)
	}
	return recs
}

// A small L2 run gives a record per N with the lower bound below the upper bound, and
// writes the table with its fits, a CSV and a plot.
func TestRunL2(t *testing.T) {
	c := defaults(2, 4, 8)
	c.Search.Starts, c.Search.Steps = 3, 20
	var streamed int
	recs, err := Run(c, Progress{Record: func(Record) error { streamed++; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || streamed != 3 {
		t.Fatalf("%d records, %d streamed, want 3", len(recs), streamed)
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
	var table bytes.Buffer
	WriteTable(&table, c, recs)
	if !strings.Contains(table.String(), "W0((N-1)/e)") || !strings.Contains(table.String(), "log N - log log N") {
		t.Errorf("table or fits missing:\n%s", table.String())
	}
	var csv bytes.Buffer
	if err := WriteCSV(&csv, recs); err != nil || strings.Count(csv.String(), "\n") != 4 {
		t.Errorf("CSV: %v\n%s", err, csv.String())
	}
	plotPath := filepath.Join(t.TempDir(), "l2.svg")
	if err := SavePlot(plotPath, c, recs); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(plotPath); err != nil || !bytes.Contains(data, []byte("<svg")) {
		t.Errorf("plot: %v", err)
	}
}

// The best two-cluster input seeds a start, so the lower bound is at least the
// construction's: for the 2-norm at N = 32 a short random search alone falls
// well below it.
func TestRunClimbsFromConstruction(t *testing.T) {
	c := defaults(32)
	c.Search.Norm, c.Search.Starts, c.Search.Steps = search.Norm2, 2, 20
	r := mustRun(t, c)[0]
	if !r.ClusterStart || r.Lower < r.Construction || r.LowerRandom == nil || !(*r.LowerRandom < 0.95*r.Construction) {
		t.Errorf("cluster start %v: lower %v, random starts %v, construction %v: want lower >= construction > random / 0.95",
			r.ClusterStart, r.Lower, r.LowerRandom, r.Construction)
	}
	c.NoConstruction = true
	if r := mustRun(t, c)[0]; r.ClusterStart || r.LowerRandom == nil || r.Lower != *r.LowerRandom {
		t.Errorf("without the construction: cluster start %v, lower %v, random starts %v", r.ClusterStart, r.Lower, r.LowerRandom)
	}
	// With one start the construction takes it: no random start, a null best of them.
	c.NoConstruction, c.Search.Starts = false, 1
	var js bytes.Buffer
	recs := mustRun(t, c)
	if r := recs[0]; !r.ClusterStart || r.LowerRandom != nil || r.Lower < r.Construction {
		t.Errorf("one start: cluster start %v, random starts %v, lower %v, construction %v", r.ClusterStart, r.LowerRandom, r.Lower, r.Construction)
	}
	if err := json.NewEncoder(&js).Encode(recs[0]); err != nil || !strings.Contains(js.String(), `"lower_random":null`) {
		t.Errorf("one start: JSON %v: %s", err, js.String())
	}
}

// A DP run in boxes has no upper bound, reports the construction and the
// growth exponents in R, and plots against R.
func TestRunDP(t *testing.T) {
	c := defaults(3, 5)
	c.Kind, c.Radii = ops.DotProduct, []float64{1, 4}
	c.Search.Starts, c.Search.Steps = 3, 30
	recs := mustRun(t, c)
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
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
	var table bytes.Buffer
	WriteTable(&table, c, recs)
	if !strings.Contains(table.String(), "local exponents") {
		t.Errorf("growth exponents missing from the table:\n%s", table.String())
	}
	plotPath := filepath.Join(t.TempDir(), "dp.png")
	if err := SavePlot(plotPath, c, recs); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(plotPath); err != nil || info.Size() == 0 {
		t.Errorf("plot: %v", err)
	}
}

// The graph engine and the closed form give the same search on a D = 1 layer;
// a D = 4 run with random weights and the 2-norm uses the graph and reports
// [K]'s 2-norm formula next to the corrected bound.
func TestRunEngines(t *testing.T) {
	c := defaults(5)
	c.Search.Starts, c.Search.Steps, c.Causal = 2, 10, true
	c.Engine = EngineScalar
	s := mustRun(t, c)[0]
	c.Engine = EngineGraph
	g := mustRun(t, c)[0]
	if s.Engine != "scalar" || g.Engine != "graph" || math.Abs(s.Lower-g.Lower) > 1e-9*s.Lower {
		t.Errorf("scalar %s %.15g, graph %s %.15g", s.Engine, s.Lower, g.Engine, g.Lower)
	}
	c = defaults(3)
	c.Dim, c.Heads, c.Weights, c.Search.Norm, c.Workers = 4, 2, WeightsRandom, search.Norm2, 2
	c.Search.Starts, c.Search.Steps = 2, 5
	r := mustRun(t, c)[0]
	if r.Engine != "graph" || r.Norm != "2" || r.UpperAsStated == nil || r.Upper == nil || r.Lower > *r.Upper {
		t.Errorf("D=4 2-norm record %+v", r)
	}
}

// Settings the search does not check are refused.
func TestRunChecks(t *testing.T) {
	for name, edit := range map[string]func(*Config){
		"weights":     func(c *Config) { c.Weights = "ones" },
		"engine":      func(c *Config) { c.Engine = "gpu" },
		"scalar, D=2": func(c *Config) { c.Engine, c.Dim, c.Heads = EngineScalar, 2, 1 },
		"workers":     func(c *Config) { c.Workers = 0 },
		"dp unboxed":  func(c *Config) { c.Kind = ops.DotProduct },
	} {
		c := defaults(3)
		edit(&c)
		if _, err := Run(c, Progress{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
