package tightness

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"lipformer/lipschitz/search"
)

// Shapes keeps the pairs with H dividing D, D by D.
func TestShapes(t *testing.T) {
	got := Shapes([]int{2, 3, 4}, []int{1, 2, 4})
	want := []Shape{{2, 1}, {2, 2}, {3, 1}, {4, 1}, {4, 2}, {4, 4}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Shapes = %v, want %v", got, want)
	}
}

// A run over shapes gives a record per shape and N, each with lower bounds under [K]'s,
// the product and the token-norm bounds, and writes its table and plot.
func TestRunShapes(t *testing.T) {
	c := defaults(3, 4)
	c.Weights, c.NoConstruction = WeightsRandom, true
	c.Search.Starts, c.Search.Steps = 2, 20
	c.Search.Escape, c.Search.Restarts, c.Search.Perturb = search.DefaultEscape, search.DefaultRestarts, search.DefaultPerturb
	recs, err := RunShapes(c, Shapes([]int{2, 4}, []int{1, 2}), Progress{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 8 {
		t.Fatalf("%d records, want 8", len(recs))
	}
	for _, r := range recs {
		if r.Upper == nil || r.UpperProduct == nil || r.UpperTok2 == nil || r.LowerTok2 == nil || r.Construction != 0 {
			t.Fatalf("D=%d H=%d N=%d: record %+v", r.D, r.Heads, r.N, r)
		}
		if !(r.Lower > 0) || r.Lower > *r.Upper || r.Lower > *r.UpperProduct || !(*r.LowerTok2 > 0) || *r.LowerTok2 > *r.UpperTok2 {
			t.Errorf("D=%d H=%d N=%d: lower %v, kim %v, product %v; token2 lower %v, bound %v", r.D, r.Heads, r.N,
				r.Lower, *r.Upper, *r.UpperProduct, *r.LowerTok2, *r.UpperTok2)
		}
	}
	var table bytes.Buffer
	WriteShapeTable(&table, recs)
	if strings.Count(table.String(), "\n") != 9 || !strings.Contains(table.String(), "lower/kim") {
		t.Errorf("table:\n%s", table.String())
	}
	plotPath := filepath.Join(t.TempDir(), "shapes.svg")
	if err := SaveShapePlot(plotPath, recs); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(plotPath); err != nil || !bytes.Contains(data, []byte("<svg")) {
		t.Errorf("plot: %v", err)
	}
}
