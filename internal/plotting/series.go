package plotting

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Series is one line of a chart: its points in drawing order and its legend entry. Series
// take the palette's colours in turn, then the same colours in other line patterns (Line).
type Series struct {
	Label    string    // legend text; a series with an empty label has no legend entry
	X, Y     []float64 // the points; X and Y have the same length
	Points   bool      // mark every point, not only those standing alone
	Dashed   bool      // dash the line
	MarkLast bool      // draw a cross at the last drawable point (where a run diverged, say)
}

// add draws the i-th series s on p, in pieces between undrawable points, adds its entry
// to legend, and returns the number of points drawn.
func (c Chart) add(p *plot.Plot, legend *plot.Legend, i int, s Series) (int, error) {
	if len(s.X) != len(s.Y) {
		return 0, fmt.Errorf("series %d (%q) has %d x values and %d y values", i, s.Label, len(s.X), len(s.Y))
	}
	st := styleOf(i, s.Dashed)
	pieces := c.pieces(s)
	drawn := 0
	for _, piece := range pieces {
		drawn += len(piece)
		if len(piece) > 1 {
			p.Add(&plotter.Line{XYs: piece, LineStyle: st.line})
		}
		if len(piece) == 1 || s.Points {
			p.Add(&plotter.Scatter{XYs: piece, GlyphStyle: st.dot})
		}
	}
	thumbs := []plot.Thumbnailer{&plotter.Line{LineStyle: st.line}}
	if s.Points {
		thumbs = append(thumbs, &plotter.Scatter{GlyphStyle: st.dot})
	}
	if s.MarkLast {
		end := &plotter.Scatter{GlyphStyle: st.cross}
		if len(pieces) > 0 {
			last := pieces[len(pieces)-1]
			end.XYs = last[len(last)-1:]
			p.Add(end)
		}
		thumbs = append(thumbs, end)
	}
	if s.Label != "" {
		legend.Add(s.Label, thumbs...)
	}
	return drawn, nil
}

// addRefs draws the reference lines across the x range of the drawable points, each with
// a legend entry, in grey with dashes that differ from line to line. A line whose off is
// not 0 lies outside the fitted y range (Chart.FitY): it is not drawn, and its legend
// entry says it is off the plot, above (1) or below (-1).
func (c Chart) addRefs(p *plot.Plot, legend *plot.Legend, off []int) error {
	if len(c.Refs) == 0 {
		return nil
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for i, x := range s.X {
			if c.drawable(x, s.Y[i]) {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
	}
	for i, r := range c.Refs {
		if !c.drawable(lo, r.Y) {
			return fmt.Errorf("reference line %q at %v cannot be drawn%s", r.Label, r.Y, c.logNote())
		}
		if off[i] != 0 {
			where := "above"
			if off[i] < 0 {
				where = "below"
			}
			legend.Add(r.Label + " (off the plot, " + where + ")")
			continue
		}
		l := &plotter.Line{XYs: plotter.XYs{{X: lo, Y: r.Y}, {X: hi, Y: r.Y}}}
		l.LineStyle.Color = color.Gray{Y: 110}
		l.LineStyle.Width = vg.Points(1)
		l.LineStyle.Dashes = []vg.Length{vg.Points(float64(2 + 2*i)), vg.Points(3)}
		p.Add(l)
		legend.Add(r.Label, l)
	}
	return nil
}

// pieces splits a series into its maximal runs of consecutive drawable points: a point
// that cannot be drawn ends the run before it.
func (c Chart) pieces(s Series) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for i := range s.X {
		if !c.drawable(s.X[i], s.Y[i]) {
			if len(cur) > 0 {
				out, cur = append(out, cur), nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: s.X[i], Y: s.Y[i]})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// drawable reports whether a point has finite coordinates, above zero on a logarithmic axis.
func (c Chart) drawable(x, y float64) bool {
	return finite(x) && finite(y) && (!c.LogX || x > 0) && (!c.LogY || y > 0)
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
