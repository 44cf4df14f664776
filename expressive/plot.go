package expressive

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"lipformer/internal/plotting"
)

// SavePlot draws the smallest d against L to a .png or .svg file at path, one line per
// (method, margin, k), with the fitted a + b log L of each as a thin dashed line. Both axes are
// logarithmic: the methods differ by orders of magnitude in d. The fitted curve is drawn
// only where it is positive.
func SavePlot(path string, groups []*Group) error {
	c := groups[0].Results[0].Cell
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Smallest d with success rate >= %g (eps = %g, values in [1, %g])", 1-c.Delta, c.Eps, c.Range)
	p.X.Label.Text = "sequence length L"
	p.Y.Label.Text = "smallest d"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = lengthTicks(groups), plot.LogTicks{Prec: -1}
	// Bottom right, raised above the lowest lines (gd's d of 2-10 take about the lowest
	// 80 points at the default size) into the empty band between gd and jl.
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(10), vg.Points(80)
	drawn := 0
	for i, g := range groups {
		var pts plotter.XYs
		for _, r := range g.Results {
			if r.Search.Found {
				pts = append(pts, plotter.XY{X: float64(r.Cell.L), Y: float64(r.Search.D)})
			}
		}
		if len(pts) == 0 {
			continue
		}
		line, scatter, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		line.LineStyle, scatter.GlyphStyle = plotting.Line(i), plotting.Glyph(i)
		col := line.Color
		if g.Method == MethodGD {
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		p.Add(line, scatter)
		p.Legend.Add(fmt.Sprintf("%s k=%d", g.Name(), g.K), line, scatter)
		drawn++
		if g.Fitted {
			if fit := fittedCurve(g, pts, col); fit != nil {
				p.Add(fit)
			}
		}
	}
	if drawn == 0 {
		return fmt.Errorf("no cell found a d, nothing to plot")
	}
	return p.Save(9*vg.Inch, 6*vg.Inch, path)
}

// fittedCurve samples the fitted a + b log L over the group's range of L.
func fittedCurve(g *Group, pts plotter.XYs, col color.Color) *plotter.Line {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pt := range pts {
		lo, hi = math.Min(lo, pt.X), math.Max(hi, pt.X)
	}
	var xy plotter.XYs
	for s := range 41 {
		L := lo * math.Pow(hi/lo, float64(s)/40)
		if y := g.LogFit.A + g.LogFit.B*math.Log(L); y > 0 {
			xy = append(xy, plotter.XY{X: L, Y: y})
		}
	}
	if len(xy) < 2 {
		return nil
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return nil
	}
	l.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}
	return l
}

// lengthTicks labels the x axis at every length L of the data.
func lengthTicks(groups []*Group) plot.ConstantTicks {
	seen := map[int]bool{}
	var ticks plot.ConstantTicks
	for _, g := range groups {
		for _, r := range g.Results {
			if L := r.Cell.L; !seen[L] {
				seen[L] = true
				ticks = append(ticks, plot.Tick{Value: float64(L), Label: strconv.Itoa(L)})
			}
		}
	}
	return ticks
}
