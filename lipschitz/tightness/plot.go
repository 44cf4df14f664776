package tightness

import (
	"fmt"
	"image/color"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"lipformer/internal/plotting"
	"lipformer/lipschitz/search"
)

// SavePlot draws the records' bounds to a .png or .svg file at path: against R (both
// axes logarithmic, one line per N) when c has several radii, else the lower and upper
// bounds against N (logarithmic x axis).
func SavePlot(path string, c Config, recs []Record) error {
	p := plot.New()
	var err error
	if len(c.Radii) > 1 {
		err = plotAgainstR(p, c, recs)
	} else {
		err = plotAgainstN(p, c, recs)
	}
	if err != nil {
		return err
	}
	return p.Save(8*vg.Inch, 5.5*vg.Inch, path)
}

// title describes the layer and the search.
func title(c Config) string {
	causal := ""
	if c.Causal {
		causal = ", causal"
	}
	return fmt.Sprintf("%v attention, D=%d, H=%d, %s weights%s: ||J||_%v, %d starts x %d Adam steps",
		c.Kind, c.Dim, c.Heads, c.Weights, causal, c.Search.Norm, c.Search.Starts, c.Search.Steps)
}

// plotAgainstN draws the lower bound, the best two-cluster input and (if any)
// the upper bound against N.
func plotAgainstN(p *plot.Plot, c Config, recs []Record) error {
	p.Title.Text = title(c)
	p.X.Label.Text = "sequence length N"
	p.Y.Label.Text = fmt.Sprintf("Lipschitz constant (%v-norm)", c.Search.Norm)
	p.X.Scale = plot.LogScale{}
	var ticks plot.ConstantTicks
	var lower, pair, upper plotter.XYs
	for _, r := range recs {
		lower = append(lower, plotter.XY{X: float64(r.N), Y: r.Lower})
		pair = append(pair, plotter.XY{X: float64(r.N), Y: r.Construction})
		if r.Upper != nil {
			upper = append(upper, plotter.XY{X: float64(r.N), Y: *r.Upper})
		}
		ticks = append(ticks, plot.Tick{Value: float64(r.N), Label: strconv.Itoa(r.N)})
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = ticks, plotting.LinearTicks()
	if c.Search.Norm == search.Norm2 {
		// The 2-norm bound grows like sqrt(N) log N, far above the lower bound.
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(10), -vg.Points(10)
	series := []plotting.Named{{Name: "lower bound (best ||J(X)|| found by Adam)", XYs: lower}, {Name: "two-cluster input (one token 0, the others at +-t)", XYs: pair}}
	if len(upper) > 0 {
		name := "upper bound (Kim et al. Thm 3.2)"
		if c.Search.Norm == search.Norm2 {
			name = "upper bound (Kim et al. Thm 3.2, W^Q norm squared)"
		}
		series = append(series, plotting.Named{Name: name, XYs: upper})
	}
	return plotting.AddLinePoints(p, series...)
}

// plotAgainstR draws the lower bound against R, one line per N, with the
// reference R^2 (docs/math.md's ("Attention") quadratic growth) dashed.
func plotAgainstR(p *plot.Plot, c Config, recs []Record) error {
	p.Title.Text = title(c)
	p.X.Label.Text = "box radius R (||X||_inf <= R)"
	p.Y.Label.Text = fmt.Sprintf("lower bound on Lip (%v-norm)", c.Search.Norm)
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(10), -vg.Points(10)
	var series []plotting.Named
	for _, n := range c.Ns {
		var pts plotter.XYs
		for _, r := range recs {
			if r.N == n && r.Lower > 0 {
				pts = append(pts, plotter.XY{X: r.Radius, Y: r.Lower})
			}
		}
		series = append(series, plotting.Named{Name: fmt.Sprintf("N=%d", n), XYs: pts})
	}
	if err := plotting.AddLinePoints(p, series...); err != nil {
		return err
	}
	var ref plotter.XYs
	for _, r := range c.Radii {
		ref = append(ref, plotter.XY{X: r, Y: r * r})
	}
	sort.Slice(ref, func(i, j int) bool { return ref[i].X < ref[j].X })
	l, err := plotter.NewLine(ref)
	if err != nil {
		return err
	}
	l.Color = color.Gray{Y: 100}
	l.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
	p.Add(l)
	p.Legend.Add("R^2", l)
	return nil
}
