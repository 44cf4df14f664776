// Package plotting draws line charts (training curves, bounds against a size, search
// results) to PNG, SVG or PDF files with gonum/plot. Points that cannot be drawn — NaN,
// infinities, and values not above zero on a logarithmic axis — break a line instead of
// failing the chart, so the finite part of a diverged run is still drawn.
package plotting

import (
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"lipformer/internal/atomicfile"
)

// Default size of a chart's plot, in inches (768 x 480 pixels in PNG); the legend is
// drawn below the plot and adds to the height.
const (
	DefaultWidth  = 8.0
	DefaultHeight = 5.0
)

// legendFontSize is the size of the legend's text, in points; legendPad is the space
// around the legend.
const (
	legendFontSize = 10
	legendPad      = vg.Length(8)
)

// Chart is a line chart. The zero value of each field is a sensible default: linear
// axes and a plot of DefaultWidth x DefaultHeight inches. The legend, one line per
// labelled series, goes below the plot so that it hides no data.
type Chart struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool    // logarithmic axes
	Width, Height         float64 // of the plot, in inches
	Series                []Series
	// Refs are horizontal reference lines (baselines) across the series' x range, drawn
	// grey and dashed with their own legend entries.
	Refs []Ref
	// FitY fits the y range to the series rather than to every point: from their lowest
	// point to their highest past the first tenth of each one's x span (a training curve's
	// first values lie far above the rest), widened to the reference lines close to it.
	// A reference line far outside stays in the legend, marked as off the plot, above or
	// below.
	FitY bool
}

// Ref is a horizontal reference line at Y.
type Ref struct {
	Label string
	Y     float64
}

// Formats lists the file formats Save and Write produce, as file extensions.
func Formats() []string { return []string{"png", "svg", "pdf"} }

// FormatOf returns the format named by the extension of path, or an error when it is
// not one of Formats.
func FormatOf(path string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	if !slices.Contains(Formats(), ext) {
		return "", fmt.Errorf("%s: unknown image format %q, want a name ending in .%s", path, ext, strings.Join(Formats(), ", ."))
	}
	return ext, nil
}

// Save draws the chart to path atomically, in the format of its extension (see FormatOf).
func (c Chart) Save(path string) error {
	format, err := FormatOf(path)
	if err != nil {
		return err
	}
	p, legend, err := c.build()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return atomicfile.Write(path, func(w io.Writer) error { return c.write(p, legend, w, format) })
}

// Write draws the chart to w in format, one of Formats.
func (c Chart) Write(w io.Writer, format string) error {
	if !slices.Contains(Formats(), format) {
		return fmt.Errorf("unknown image format %q, want one of %s", format, strings.Join(Formats(), ", "))
	}
	p, legend, err := c.build()
	if err != nil {
		return err
	}
	return c.write(p, legend, w, format)
}

// write renders the built plot p with its legend below it.
func (c Chart) write(p *plot.Plot, legend *plot.Legend, w io.Writer, format string) error {
	width, height := vg.Length(c.Width)*vg.Inch, vg.Length(c.Height)*vg.Inch
	if width <= 0 {
		width = DefaultWidth * vg.Inch
	}
	if height <= 0 {
		height = DefaultHeight * vg.Inch
	}
	strip := vg.Length(0)
	if r := legend.Rectangle(draw.Canvas{}); r.Size().Y > 0 {
		strip = r.Size().Y + 2*legendPad
	}
	canvas, err := draw.NewFormattedCanvas(width, height+strip, format)
	if err != nil {
		return err
	}
	dc := draw.New(canvas)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	p.Draw(drawAxisLabels(draw.Crop(dc, 0, 0, strip, 0), p, c.XLabel, c.YLabel))
	legend.Draw(draw.Crop(dc, legendPad, 0, legendPad, -height-legendPad))
	_, err = canvas.WriteTo(w)
	return err
}

// build lays out the plot (axes, grid, each series' pieces and end mark) and the legend.
func (c Chart) build() (*plot.Plot, *plot.Legend, error) {
	p := plot.New()
	p.Title.Text = c.Title
	p.X.Tick.Marker, p.Y.Tick.Marker = linearTicks{}, linearTicks{}
	if c.LogX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	if c.LogY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	p.Add(plotter.NewGrid())
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.TextStyle.Font.Size = legendFontSize
	drawn := 0
	for i, s := range c.Series {
		n, err := c.add(p, &legend, i, s)
		if err != nil {
			return nil, nil, err
		}
		drawn += n
	}
	if drawn == 0 {
		return nil, nil, fmt.Errorf("nothing to draw: no series has a point with finite coordinates%s", c.logNote())
	}
	off := make([]int, len(c.Refs))
	if c.FitY {
		lo, hi, o, ok := c.fitRange()
		if ok {
			p.Y.Min, p.Y.Max, off = lo, hi, o
		}
	}
	if err := c.addRefs(p, &legend, off); err != nil {
		return nil, nil, err
	}
	if c.LogX {
		widenLog(&p.X)
	}
	if c.LogY {
		widenLog(&p.Y)
	}
	return p, &legend, nil
}

// logNote qualifies the nothing-to-draw error on charts with logarithmic axes.
func (c Chart) logNote() string {
	if c.LogX || c.LogY {
		return " (above zero on the logarithmic axes)"
	}
	return ""
}

// widenLog gives a logarithmic axis whose data is a single value a range around it:
// gonum would widen it by ±1, which can reach zero.
func widenLog(a *plot.Axis) {
	if a.Min == a.Max {
		a.Min, a.Max = a.Min/2, a.Max*2
	}
}
