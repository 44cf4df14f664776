package plotting

import (
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// style is how one series is drawn.
type style struct {
	line  draw.LineStyle  // its lines
	dot   draw.GlyphStyle // its points: those standing alone, or all with Series.Points
	cross draw.GlyphStyle // the mark of its last point
}

// styleOf returns the style of the i-th series: the dark palette's colours in turn, then
// the same colours dashed, and so on, so that many series stay distinguishable; a dashed
// series is dashed in any case.
func styleOf(i int, dashed bool) style {
	colors := plotutil.DarkColors
	col := colors[i%len(colors)]
	dashes := plotutil.Dashes(i / len(colors))
	if dashed && len(dashes) == 0 {
		dashes = plotutil.Dashes(1)
	}
	return style{
		line:  draw.LineStyle{Color: col, Width: vg.Points(1.2), Dashes: dashes},
		dot:   draw.GlyphStyle{Color: col, Radius: vg.Points(2), Shape: draw.CircleGlyph{}},
		cross: draw.GlyphStyle{Color: col, Radius: vg.Points(4), Shape: draw.CrossGlyph{}},
	}
}
