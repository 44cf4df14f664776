package plotting

import (
	"image/color"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Palette returns the colours series take in turn: Okabe and Ito's qualitative palette,
// which readers with the common colour-vision deficiencies tell apart, without its yellow
// (too faint on white), black last.
func Palette() []color.Color {
	return []color.Color{
		color.RGBA{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF}, // blue
		color.RGBA{R: 0xD5, G: 0x5E, B: 0x00, A: 0xFF}, // vermillion
		color.RGBA{R: 0x00, G: 0x9E, B: 0x73, A: 0xFF}, // bluish green
		color.RGBA{R: 0xCC, G: 0x79, B: 0xA7, A: 0xFF}, // reddish purple
		color.RGBA{R: 0xE6, G: 0x9F, B: 0x00, A: 0xFF}, // orange
		color.RGBA{R: 0x56, G: 0xB4, B: 0xE9, A: 0xFF}, // sky blue
		color.RGBA{R: 0x00, G: 0x00, B: 0x00, A: 0xFF}, // black
	}
}

// dashPatterns returns the line patterns that follow each other once the palette's
// colours are used up: solid, dashed, dotted, dash-dot, long dashes.
func dashPatterns() [][]vg.Length {
	return [][]vg.Length{
		nil,
		{vg.Points(6), vg.Points(3)},
		{vg.Points(1.5), vg.Points(2)},
		{vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)},
		{vg.Points(12), vg.Points(4)},
	}
}

// Line returns the line style of the i-th series: the palette's colours in turn, solid,
// then the same colours in each of the other patterns, so that the first
// len(Palette())*5 series all differ.
func Line(i int) draw.LineStyle {
	colors, dashes := Palette(), dashPatterns()
	return draw.LineStyle{Color: colors[i%len(colors)], Width: vg.Points(1.5), Dashes: dashes[(i/len(colors))%len(dashes)]}
}

// style is how one series is drawn.
type style struct {
	line  draw.LineStyle  // its lines
	dot   draw.GlyphStyle // its points: those standing alone, or all with Series.Points
	cross draw.GlyphStyle // the mark of its last point
}

// dotShapes are the marks of points, in turn with the dash patterns: a point alone shows
// no dashes, so a series that shares another's colour has another mark.
func dotShapes() []draw.GlyphDrawer {
	return []draw.GlyphDrawer{draw.CircleGlyph{}, draw.PyramidGlyph{}, draw.SquareGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}}
}

// styleOf returns the style of the i-th series (Line), its points marked by a circle, or
// past the palette's colours by another shape; a dashed series is dashed in any case.
func styleOf(i int, dashed bool) style {
	line := Line(i)
	if dashed && len(line.Dashes) == 0 {
		line.Dashes = dashPatterns()[1]
	}
	shapes := dotShapes()
	shape := shapes[(i/len(Palette()))%len(shapes)]
	radius := vg.Points(2)
	if i >= len(Palette()) {
		radius = vg.Points(3.5)
	}
	return style{
		line:  line,
		dot:   draw.GlyphStyle{Color: line.Color, Radius: radius, Shape: shape},
		cross: draw.GlyphStyle{Color: line.Color, Radius: vg.Points(4), Shape: draw.CrossGlyph{}},
	}
}
