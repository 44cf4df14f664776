package plotting

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func twoSeries() Chart {
	nan := math.NaN()
	return Chart{
		Title: "curves", XLabel: "step", YLabel: "bpc",
		Series: []Series{
			{Label: "a", X: []float64{0, 1, 2, 3}, Y: []float64{4, 3, 2.5, 2}},
			{Label: "b (diverged)", X: []float64{0, 1, 2, 3}, Y: []float64{4, 3.5, 5, nan}, MarkLast: true},
		},
	}
}

func TestSavePNGDecodes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.png")
	c := twoSeries()
	c.Width, c.Height = 4, 3
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s is not a PNG: %v", path, err)
	}
	// 4 x 3 inches at 96 dpi, and two legend lines below.
	if b := img.Bounds(); b.Dx() != 4*96 || b.Dy() <= 3*96 || b.Dy() > 3*96+60 {
		t.Errorf("PNG is %v, want 384 wide and a little over 288 high", b)
	}
}

func TestWriteSVGHasLegend(t *testing.T) {
	var buf bytes.Buffer
	if err := twoSeries().Write(&buf, "svg"); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	if !strings.Contains(svg, "<svg") || !strings.Contains(svg, "b (diverged)") || !strings.Contains(svg, "curves") {
		t.Errorf("SVG lacks the <svg> element, the legend or the title:\n%.500s", svg)
	}
}

// TestLogAxesSkipUndrawablePoints: on logarithmic axes the points with x or y at or below
// zero, infinite or NaN are left out and the others drawn: the axes span exactly the
// drawable points, the lone ones get a dot each, and the chart renders.
func TestLogAxesSkipUndrawablePoints(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	c := Chart{LogX: true, LogY: true, Series: []Series{
		// Drawable: (1, 1e-4) and (2, 1e-3), a line; (4, 2e-3) and (6, 5e-3), lone points.
		{Label: "lr", X: []float64{0, 1, 2, 3, 4, 5, -1, 6, 7, 8}, Y: []float64{3, 1e-4, 1e-3, inf, 2e-3, 0, 3, 5e-3, -2, nan}},
		{Label: "one point", X: []float64{0.5, 5, inf}, Y: []float64{-1, 7, 1e-9}}, // drawable: (5, 7)
	}}
	p, _, err := c.build()
	if err != nil {
		t.Fatal(err)
	}
	if p.X.Min != 1 || p.X.Max != 6 || p.Y.Min != 1e-4 || p.Y.Max != 7 {
		t.Fatalf("axes x %g..%g, y %g..%g; want the drawable points' 1..6 and 1e-4..7", p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	}
	dots := 0
	for _, b := range p.GlyphBoxes(p) {
		if b.Size().X > 2 { // a line gives boxes as wide as the line, 1.2 points
			dots++
		}
	}
	if dots != 3 {
		t.Errorf("%d dots, want one at each of the 3 lone drawable points", dots)
	}
	var buf bytes.Buffer
	if err := c.Write(&buf, "png"); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&buf); err != nil {
		t.Fatal(err)
	}
}

func TestSingleValueOnLogAxis(t *testing.T) {
	c := Chart{LogY: true, Series: []Series{{X: []float64{1, 2}, Y: []float64{3, 3}}}}
	p, _, err := c.build()
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Min != 1.5 || p.Y.Max != 6 {
		t.Errorf("y range %g..%g, want 1.5..6 around the single value 3", p.Y.Min, p.Y.Max)
	}
	if err := c.Write(&bytes.Buffer{}, "svg"); err != nil {
		t.Fatal(err)
	}
}

func TestChartErrors(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		chart Chart
		want  string
	}{
		{Chart{}, "nothing to draw"},
		{Chart{Series: []Series{{Label: "x", X: []float64{nan}, Y: []float64{1}}}}, "nothing to draw"},
		{Chart{LogY: true, Series: []Series{{X: []float64{1, 2}, Y: []float64{0, -1}}}}, "logarithmic"},
		{Chart{Series: []Series{{Label: "bad", X: []float64{1, 2}, Y: []float64{1}}}}, `("bad") has 2 x values and 1 y values`},
	} {
		if err := c.chart.Write(&bytes.Buffer{}, "png"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.chart, err, c.want)
		}
	}
	if err := twoSeries().Save(filepath.Join(t.TempDir(), "c.gif")); err == nil || !strings.Contains(err.Error(), `"gif"`) {
		t.Errorf("saving to .gif: error %v, want one naming the format", err)
	}
	if err := twoSeries().Write(&bytes.Buffer{}, "tex"); err == nil {
		t.Error("writing format tex: no error")
	}
}

func TestFormatOf(t *testing.T) {
	for path, want := range map[string]string{"a.png": "png", "b/c.SVG": "svg", "d.pdf": "pdf", "e": "", "f.jpg": ""} {
		got, err := FormatOf(path)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("FormatOf(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
}

// Reference lines span the series' x range, have legend entries, and must be drawable.
func TestRefs(t *testing.T) {
	c := twoSeries()
	c.Refs = []Ref{{Label: "trigram 2.95", Y: 2.95}}
	var buf bytes.Buffer
	if err := c.Write(&buf, "svg"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "trigram 2.95") {
		t.Error("SVG lacks the reference line's legend entry")
	}
	c.LogY, c.Refs = true, []Ref{{Label: "zero", Y: 0}}
	if err := c.Write(&buf, "svg"); err == nil {
		t.Error("a reference line at 0 on a logarithmic axis was accepted")
	}
}
