package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"github.com/schollz/progressbar/v3"

	"lipformer/internal/cli"
	"lipformer/layers"
	"lipformer/lipschitz"
	"lipformer/lipschitz/search"
)

// run parses args, runs every (N, R) and writes the table, JSON, CSV and plot.
func run(args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if c.ckpt != "" {
		o := search.Options{Starts: c.inits, Steps: c.steps, LR: c.lr, LRFinal: c.lrFinal, InitMin: c.initMin, InitMax: c.initMax,
			Refresh: c.refresh, Seed: c.seed}
		return certify(c.ckpt, c.searchN, o, c.json, stdout)
	}
	human := stdout
	if c.json {
		human = stderr
	}
	a, err := c.newLayer()
	if err != nil {
		return err
	}
	bar := cli.Bar(stderr, len(c.ns)*len(c.radii)*c.inits, "starts")
	var recs []record
	for _, n := range c.ns {
		var prev *warmStart
		for _, r := range c.radii {
			if bar != nil {
				bar.Describe(fmt.Sprintf("N=%d R=%g", n, r))
			}
			rec, best, err := c.runCell(a, n, r, prev, bar)
			if err != nil {
				return fmt.Errorf("N = %d, R = %g: %w", n, r, err)
			}
			prev = nil
			if c.warm && r > 0 {
				prev = &warmStart{x: best, radius: r}
			}
			recs = append(recs, rec)
			if c.json {
				if err := writeJSON(stdout, rec); err != nil {
					return err
				}
			}
		}
	}
	if bar != nil {
		_ = bar.Finish()
		fmt.Fprintln(stderr)
	}
	writeTable(human, c, recs)
	if c.csvPath != "" {
		if err := writeCSV(c.csvPath, recs); err != nil {
			return err
		}
	}
	if c.plotPath != "" {
		return writePlot(c.plotPath, c, recs)
	}
	return nil
}

// warmStart is the best input found in the previous box, of radius radius.
type warmStart struct {
	x      []float64
	radius float64
}

// runCell searches the lower bound at n tokens inside the box of radius r
// (0: none) and compares it with the upper bound. With a warm start (prev not
// nil) and a box, start 0 begins at prev's input scaled to the box, and the
// other starts are random. It also returns the best input.
func (c *config) runCell(a *layers.Attention, n int, r float64, prev *warmStart, bar *progressbar.ProgressBar) (record, []float64, error) {
	start := time.Now()
	maps, release, err := c.newMaps(a, n)
	defer release()
	if err != nil {
		return record{}, nil, err
	}
	o := search.Options{Norm: c.norm, Starts: c.inits, Steps: c.steps, LR: c.lr, LRFinal: c.lrFinal, Radius: r,
		InitMin: c.initMin, InitMax: c.initMax, Refresh: c.refresh, Seed: c.seed}
	if prev != nil && r > 0 {
		x := make([]float64, len(prev.x))
		for k, v := range prev.x {
			x[k] = v * r / prev.radius
		}
		o.Init = [][]float64{x}
	}
	var done func()
	if bar != nil {
		done = func() { _ = bar.Add(1) }
	}
	res, err := search.Maximize(maps, o, done)
	if err != nil {
		return record{}, nil, err
	}
	rec := c.newRecord(n, r)
	rec.Lower, rec.LowerMedian, rec.BestStart = res.Best, median(res.PerStart), res.Start
	rec.LowerRandom = maxOf(res.PerStart[len(o.Init):])
	rec.WarmStart = len(o.Init) > 0
	obj, err := search.NewObjective(maps[0], c.norm, 0)
	if err != nil {
		return record{}, nil, err
	}
	value, spread, err := c.construction(obj, n, r)
	if err != nil {
		return record{}, nil, err
	}
	rec.Construction, rec.ConstructionT = value, spread
	upper, asStated, err := c.upperBounds(a, n)
	switch {
	case errors.Is(err, errNoBound):
	case err != nil:
		return record{}, nil, err
	default:
		ratio := res.Best / upper
		rec.Upper, rec.Ratio = &upper, &ratio
		if asStated > 0 {
			rec.UpperAsStated = &asStated
		}
		if res.Best > upper {
			rec.X = res.X // a violation of the bound: keep the input
		}
	}
	rec.Seconds = time.Since(start).Seconds()
	return rec, res.X, nil
}

// maxOf returns the largest of v, or NaN if v is empty.
func maxOf(v []float64) float64 {
	best := math.NaN()
	for _, e := range v {
		if !(e <= best) {
			best = e
		}
	}
	return best
}

// newRecord fills the settings of a record.
func (c *config) newRecord(n int, r float64) record {
	engine := "graph"
	if c.useScalar() {
		engine = "scalar"
	}
	return record{Attn: c.kind.String(), Norm: c.norm.String(), N: n, D: c.dim, Heads: c.heads, Causal: c.causal,
		Weights: c.weights, Radius: r, PhiInv: lipschitz.PhiInv(n), Inits: c.inits, Steps: c.steps, Refresh: c.refresh, LR: c.lr,
		InitMin: c.initMin, InitMax: c.initMax, Seed: c.seed, Engine: engine}
}

// median returns the median of v (not modified).
func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
