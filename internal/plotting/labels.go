package plotting

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// drawAxisLabels writes the x label centred along the bottom of c and the y label,
// rotated, centred along its left side, in the styles of p's axis labels, and returns
// the rest of c for the plot. Gonum's own labels are not used: it reserves room for them
// at the data midpoint, which on a logarithmic axis lies near the end, and so leaves a
// wide empty margin above (or to the right of) the plot.
func drawAxisLabels(c draw.Canvas, p *plot.Plot, xLabel, yLabel string) draw.Canvas {
	left, bottom := vg.Length(0), vg.Length(0)
	if yLabel != "" {
		sty := p.Y.Label.TextStyle
		left = sty.Height(yLabel) + sty.FontExtents().Descent + p.Y.Label.Padding
	}
	if xLabel != "" {
		sty := p.X.Label.TextStyle
		bottom = sty.Height(xLabel) + p.X.Label.Padding
		c.FillText(sty, vg.Point{X: (c.Min.X + left + c.Max.X) / 2, Y: c.Min.Y + sty.FontExtents().Descent}, xLabel)
	}
	if yLabel != "" {
		sty := p.Y.Label.TextStyle
		x := c.Min.X + sty.Height(yLabel) - sty.FontExtents().Descent
		sty.Rotation += math.Pi / 2
		c.FillText(sty, vg.Point{X: x, Y: (c.Min.Y + bottom + c.Max.Y) / 2}, yLabel)
	}
	return draw.Crop(c, left, 0, bottom, 0)
}
