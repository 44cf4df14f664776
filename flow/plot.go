package flow

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"lipformer/internal/atomicfile"
	"lipformer/internal/plotting"
)

// errorFloor is where reconstruction errors of 0 (or below) are drawn on the log scale.
const errorFloor = 1e-17

// PlotFormat is the image format of a plot path, from its extension: png, svg or pdf.
func PlotFormat(path string) (string, error) {
	switch ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), "."); ext {
	case "png", "svg", "pdf":
		return ext, nil
	}
	return "", fmt.Errorf("plot %s: want a .png, .svg or .pdf file", path)
}

// legendFontSize is the size of the inversion figure's legend text, in points, that of
// the panels' titles; legendPad is the space on either side of the legend.
const (
	legendFontSize = 11
	legendPad      = vg.Length(10)
)

// WritePlot draws, in one panel per input titled with arch, the reconstruction error of every sub-block
// against the iteration on a log scale, and writes the figure atomically. A sub-block has
// the same line in every panel (plotting.Line); the legend, one entry per sub-block, stands
// to the right of the panels.
func WritePlot(path, arch string, records []Record) error {
	format, err := PlotFormat(path)
	if err != nil {
		return err
	}
	var names, blocks []string
	panels := map[string][]Record{}
	for _, r := range records {
		n := r.InputName()
		if _, ok := panels[n]; !ok {
			names = append(names, n)
		}
		panels[n] = append(panels[n], r)
		if !slices.Contains(blocks, r.Block) {
			blocks = append(blocks, r.Block)
		}
	}
	cols := min(3, len(names))
	rows := (len(names) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	for i, n := range names {
		p, err := panel(fmt.Sprintf("%s: %s", arch, n), panels[n], blocks)
		if err != nil {
			return fmt.Errorf("-plot: %w", err)
		}
		grid[i/cols][i%cols] = p
	}
	legend := plot.NewLegend()
	legend.TextStyle.Font.Size = legendFontSize
	legend.Top, legend.Left = true, true
	for i, b := range blocks {
		legend.Add(b, &plotter.Line{LineStyle: plotting.Line(i)})
	}
	strip := legend.Rectangle(draw.Canvas{}).Size().X + 2*legendPad
	w, h := vg.Length(cols)*4*vg.Inch+strip, vg.Length(rows)*3*vg.Inch
	c, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return fmt.Errorf("-plot: %w", err)
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	canvases := plot.Align(grid, draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter, PadY: vg.Millimeter}, draw.Crop(dc, 0, -strip, 0, 0))
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	legend.Draw(draw.Crop(dc, w-strip+legendPad, -legendPad, 0, -legendPad))
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := c.WriteTo(w)
		return err
	})
}

// panel is one input's plot: a line per sub-block, up to its first non-finite error, in
// the style of the sub-block's place in blocks.
func panel(title string, records []Record, blocks []string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "iteration"
	p.Y.Label.Text = "reconstruction error"
	p.X.Tick.Marker = plotting.LinearTicks()
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plotting.LogTicks()
	for _, r := range records {
		var pts plotter.XYs
		for k, v := range r.Errors {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				break
			}
			pts = append(pts, plotter.XY{X: float64(k + 1), Y: math.Max(v, errorFloor)})
		}
		if len(pts) == 0 {
			continue
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		line.LineStyle = plotting.Line(slices.Index(blocks, r.Block))
		p.Add(line)
	}
	return p, nil
}

// InputName is the record's input kind with its spread, or "(stack)" for a whole-stack
// inversion.
func (r Record) InputName() string {
	if r.Stack {
		return r.Input + " (stack)"
	}
	return fmt.Sprintf("%s %g", r.Input, r.Spread)
}
