package flow

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestWritePlotLegend: the inversion figure names every sub-block once, in a legend of
// legendFontSize-point text beside the panels, whatever the number of panels.
func TestWritePlotLegend(t *testing.T) {
	var records []Record
	for _, in := range []Record{{Input: InputData, Stack: true}, {Input: InputRandom, Spread: 1}, {Input: InputRandom, Spread: 10}} {
		for _, b := range []string{"h0.attn", "h0.mlp", "h1.attn", "h1.mlp"} {
			r := in
			r.Block, r.Errors = b, []float64{1, 0.1, 0.01, 1e-3}
			records = append(records, r)
		}
	}
	path := filepath.Join(t.TempDir(), "inv.svg")
	if err := WritePlot(path, "invertible-l2", records); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(b)
	for _, block := range []string{"h0.attn", "h0.mlp", "h1.attn", "h1.mlp"} {
		re := regexp.MustCompile(`font-size:([0-9.]+)px[^>]*>` + regexp.QuoteMeta(block) + `<`)
		m := re.FindAllStringSubmatch(svg, -1)
		if len(m) != 1 || !strings.HasPrefix(m[0][1], "11") {
			t.Errorf("%s: %d labels %v, want one of font size %d", block, len(m), m, legendFontSize)
		}
	}
}
