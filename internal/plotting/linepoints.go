package plotting

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Named is a series of a figure drawn without Chart: its legend text and its points.
type Named struct {
	Name string
	XYs  plotter.XYs
}

// Glyph returns the mark of the i-th series' points: its line's colour (Line) and a shape
// of its own among six, so that series told apart by colour are also told apart in grey.
func Glyph(i int) draw.GlyphStyle {
	shapes := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{}}
	return draw.GlyphStyle{Color: Line(i).Color, Radius: vg.Points(3), Shape: shapes[i%len(shapes)]}
}

// AddLinePoints adds each series to p as a line with a mark at every point, the i-th in
// Line(i) and Glyph(i), with a legend entry: the palette of Chart for figures gonum draws
// directly (plotutil.AddLinePoints's in-house colours set red beside green).
func AddLinePoints(p *plot.Plot, series ...Named) error {
	for i, s := range series {
		line, points, err := plotter.NewLinePoints(s.XYs)
		if err != nil {
			return err
		}
		line.LineStyle, points.GlyphStyle = Line(i), Glyph(i)
		p.Add(line, points)
		p.Legend.Add(s.Name, line, points)
	}
	return nil
}
