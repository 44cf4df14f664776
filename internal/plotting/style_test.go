package plotting

import (
	"fmt"
	"testing"
)

// TestPaletteTellsSeriesApart: the palette's colours differ, and the first
// len(Palette()) x 5 series differ in colour or line pattern.
func TestPaletteTellsSeriesApart(t *testing.T) {
	colors := Palette()
	seen := map[[4]uint32]bool{}
	for i, c := range colors {
		r, g, b, a := c.RGBA()
		k := [4]uint32{r, g, b, a}
		if seen[k] {
			t.Errorf("colour %d repeats an earlier one", i)
		}
		seen[k] = true
	}
	n := len(colors) * len(dashPatterns())
	styles := map[string]int{}
	for i := range n {
		l := Line(i)
		r, g, b, a := l.Color.RGBA()
		k := fmtKey(r, g, b, a, l.Dashes)
		if j, ok := styles[k]; ok {
			t.Errorf("series %d is drawn as series %d", i, j)
		}
		styles[k] = i
	}
}

// fmtKey is a line style as a map key.
func fmtKey(r, g, b, a uint32, dashes any) string {
	return fmt.Sprint(r, g, b, a, dashes)
}

// TestGlyphs: the marks of the first six series differ in shape, and each takes its
// line's colour.
func TestGlyphs(t *testing.T) {
	shapes := map[string]int{}
	for i := range 6 {
		g := Glyph(i)
		k := fmt.Sprintf("%T", g.Shape)
		if j, ok := shapes[k]; ok {
			t.Errorf("series %d has the mark of series %d", i, j)
		}
		shapes[k] = i
		if g.Color != Line(i).Color {
			t.Errorf("series %d: mark colour %v, line colour %v", i, g.Color, Line(i).Color)
		}
	}
}

// TestPointsOfSeriesPastThePalette: a series that takes an earlier one's colour marks its
// points with another shape, so that a point alone, which shows no dashes, still tells
// them apart.
func TestPointsOfSeriesPastThePalette(t *testing.T) {
	n := len(Palette())
	for i := range n {
		a, b := styleOf(i, false), styleOf(i+n, false)
		if a.dot.Color != b.dot.Color {
			t.Fatalf("series %d and %d: colours %v and %v, want the palette's repeat", i, i+n, a.dot.Color, b.dot.Color)
		}
		if fmt.Sprintf("%T", a.dot.Shape) == fmt.Sprintf("%T", b.dot.Shape) {
			t.Errorf("series %d and %d mark their points alike (%T)", i, i+n, a.dot.Shape)
		}
	}
}
