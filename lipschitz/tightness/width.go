package tightness

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"lipformer/internal/plotting"
)

// Shape is a layer's width D and heads H.
type Shape struct{ Dim, Heads int }

// Shapes returns every (D, H) of dims and heads with H dividing D, D by D.
func Shapes(dims, heads []int) []Shape {
	var out []Shape
	for _, d := range dims {
		for _, h := range heads {
			if h >= 1 && d%h == 0 {
				out = append(out, Shape{d, h})
			}
		}
	}
	return out
}

// RunShapes runs c once per shape (its Dim and Heads replaced, the weights drawn afresh
// for each) and returns all records, shape by shape.
func RunShapes(c Config, shapes []Shape, p Progress) ([]Record, error) {
	var recs []Record
	for _, s := range shapes {
		c.Dim, c.Heads = s.Dim, s.Heads
		r, err := Run(c, p)
		if err != nil {
			return nil, fmt.Errorf("D = %d, H = %d: %w", s.Dim, s.Heads, err)
		}
		recs = append(recs, r...)
	}
	return recs, nil
}

// WriteShapeTable writes one line per record of a run over shapes: the lower bound
// beside [K]'s bound (kim) and this project's product and token-norm bounds, and the
// ratios lower / upper.
func WriteShapeTable(w io.Writer, recs []Record) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "D\tH\tN\tnorm\tlower\tkim\tlower/kim\tproduct\tlower/product\tlower token2\ttoken2\tratio token2\tseconds\t\n")
	for _, r := range recs {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%.4g\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t\n", r.D, r.Heads, r.N, r.Norm, r.Lower,
			optional(r.Upper, "%.4g"), optional(r.Ratio, "%.4f"), optional(r.UpperProduct, "%.4g"),
			optional(r.RatioProduct, "%.4f"), optional(r.LowerTok2, "%.4g"), optional(r.UpperTok2, "%.4g"),
			optional(r.RatioTok2, "%.4f"), r.Seconds)
	}
	_ = tw.Flush()
}

// SaveShapePlot draws lower / upper against D (both axes logarithmic) for [K]'s bound
// and the product bound, one line per heads H and length N, to a .png or .svg file.
func SaveShapePlot(path string, recs []Record) error {
	if len(recs) == 0 {
		return fmt.Errorf("tightness: no records to plot")
	}
	p := plot.New()
	var budgets []string
	for _, r := range recs {
		if b := fmt.Sprintf("%d x %d", r.Inits, r.Steps); !slices.Contains(budgets, b) {
			budgets = append(budgets, b)
		}
	}
	p.Title.Text = fmt.Sprintf("tied L2 attention, %s weights: best ||J||_%s / upper bound; starts x Adam steps %s",
		recs[0].Weights, recs[0].Norm, strings.Join(budgets, ", "))
	p.X.Label.Text = "width D"
	p.Y.Label.Text = "lower bound / upper bound"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	type key struct {
		bound    string
		heads, n int
	}
	var keys []key
	lines := map[key]plotter.XYs{}
	var ticks plot.ConstantTicks
	seen := map[int]bool{}
	add := func(k key, d int, v *float64) {
		if v == nil || !(*v > 0) {
			return
		}
		if _, ok := lines[k]; !ok {
			keys = append(keys, k)
		}
		lines[k] = append(lines[k], plotter.XY{X: float64(d), Y: *v})
	}
	for _, r := range recs {
		add(key{"kim", r.Heads, r.N}, r.D, r.Ratio)
		add(key{"product", r.Heads, r.N}, r.D, r.RatioProduct)
		if !seen[r.D] {
			seen[r.D] = true
			ticks = append(ticks, plot.Tick{Value: float64(r.D), Label: fmt.Sprint(r.D)})
		}
	}
	p.X.Tick.Marker = ticks
	var series []plotting.Named
	for _, k := range keys {
		series = append(series, plotting.Named{Name: fmt.Sprintf("%s, H=%d, N=%d", k.bound, k.heads, k.n), XYs: lines[k]})
	}
	if err := plotting.AddLinePoints(p, series...); err != nil {
		return err
	}
	p.Legend.Top, p.Legend.Left = false, true // the small ratios are at large D
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(10), vg.Points(10)
	return p.Save(9*vg.Inch, 6*vg.Inch, path)
}
