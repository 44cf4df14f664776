package plotting

import (
	"math"
	"reflect"
	"testing"

	"gonum.org/v1/plot/plotter"
)

func TestPiecesBreakAtUndrawablePoints(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	s := Series{X: []float64{0, 1, 2, 3, 4, 5, 6, 7}, Y: []float64{nan, 1, 2, inf, 4, 0, 6, -7}}
	for _, c := range []struct {
		chart Chart
		want  []plotter.XYs
	}{
		{Chart{}, []plotter.XYs{{{X: 1, Y: 1}, {X: 2, Y: 2}}, {{X: 4, Y: 4}, {X: 5, Y: 0}, {X: 6, Y: 6}, {X: 7, Y: -7}}}},
		{Chart{LogY: true}, []plotter.XYs{{{X: 1, Y: 1}, {X: 2, Y: 2}}, {{X: 4, Y: 4}}, {{X: 6, Y: 6}}}},
		{Chart{LogX: true}, []plotter.XYs{{{X: 1, Y: 1}, {X: 2, Y: 2}}, {{X: 4, Y: 4}, {X: 5, Y: 0}, {X: 6, Y: 6}, {X: 7, Y: -7}}}},
	} {
		if got := c.chart.pieces(s); !reflect.DeepEqual(got, c.want) {
			t.Errorf("log x %t, log y %t: pieces %v, want %v", c.chart.LogX, c.chart.LogY, got, c.want)
		}
	}
	if got := (Chart{}).pieces(Series{X: []float64{0}, Y: []float64{nan}}); got != nil {
		t.Errorf("pieces of an undrawable point: %v, want none", got)
	}
}

func TestPointsMarksAndDashes(t *testing.T) {
	nan := math.NaN()
	s := Series{Label: "s", X: []float64{0, 1, 2, 3, 4}, Y: []float64{1, 2, nan, 3, 2}}
	for _, c := range []struct {
		points, last bool
		glyphs       int
	}{{false, false, 0}, {true, false, 4}, {false, true, 1}, {true, true, 5}} {
		s.Points, s.MarkLast = c.points, c.last
		p, _, err := Chart{Series: []Series{s}}.build()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, b := range p.GlyphBoxes(p) {
			if b.Size().X > 2 { // a line gives boxes as wide as the line, 1.2 points
				n++
			}
		}
		if n != c.glyphs {
			t.Errorf("points %t, mark last %t: %d glyphs, want %d", c.points, c.last, n, c.glyphs)
		}
	}
	if len(styleOf(0, false).line.Dashes) != 0 || len(styleOf(0, true).line.Dashes) == 0 || len(styleOf(7, false).line.Dashes) == 0 {
		t.Error("want solid lines for the first seven series, dashed ones after, and dashed when asked")
	}
}
