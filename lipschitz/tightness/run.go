package tightness

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"lipformer/internal/stats"
	"lipformer/layers"
	"lipformer/lipschitz"
	"lipformer/lipschitz/search"
)

// Progress receives the experiment's progress; a nil field is not called.
type Progress struct {
	// Cell is called before the search at N = n inside the box of radius r (0: none).
	Cell func(n int, r float64)
	// Start is called after each start of a search, from the goroutine that ran it.
	Start func()
	// Record receives each cell's record as soon as it is complete; an error ends the run.
	Record func(Record) error
}

// Run searches every cell of c, N by N and within each N radius by radius, and returns
// their records in that order.
func Run(c Config, p Progress) ([]Record, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	a, err := c.newLayer()
	if err != nil {
		return nil, err
	}
	var recs []Record
	for _, n := range c.Ns {
		var prev *warmStart
		for _, r := range c.Radii {
			if p.Cell != nil {
				p.Cell(n, r)
			}
			rec, best, err := c.runCell(a, n, r, prev, p.Start)
			if err != nil {
				return nil, fmt.Errorf("N = %d, R = %g: %w", n, r, err)
			}
			prev = nil
			if c.Warm && r > 0 {
				prev = &warmStart{x: best, radius: r}
			}
			recs = append(recs, rec)
			if p.Record != nil {
				if err := p.Record(rec); err != nil {
					return nil, err
				}
			}
		}
	}
	return recs, nil
}

// warmStart is the best input found in the previous box, of radius radius.
type warmStart struct {
	x      []float64
	radius float64
}

// runCell searches the lower bound at n tokens inside the box of radius r
// (0: none) and compares it with the upper bound. With a warm start (prev not
// nil) and a box, start 0 begins at prev's input scaled to the box; unless
// c.NoConstruction, the next start, if one is left, begins at the best
// two-cluster input, so that the lower bound is at least the construction's;
// the other starts are random. It also returns the best input. done, if not nil,
// is called after each start.
func (c *Config) runCell(a *layers.Attention, n int, r float64, prev *warmStart, done func()) (Record, []float64, error) {
	start := time.Now()
	maps, release, err := c.newMaps(a, n)
	defer release()
	if err != nil {
		return Record{}, nil, err
	}
	o := c.Search
	o.Radius, o.Init, o.Width = r, nil, c.Dim
	if prev != nil && r > 0 {
		x := make([]float64, len(prev.x))
		for k, v := range prev.x {
			x[k] = v * r / prev.radius
		}
		o.Init = [][]float64{x}
	}
	rec := c.newRecord(n, r)
	rec.WarmStart = len(o.Init) > 0
	if !c.NoConstruction {
		obj, err := search.NewObjective(maps[0], c.Search.Norm, 0)
		if err != nil {
			return Record{}, nil, err
		}
		if rec.Construction, rec.ConstructionT, err = c.construction(obj, n, r); err != nil {
			return Record{}, nil, err
		}
		if len(o.Init) < o.Starts {
			o.Init = append(o.Init, c.constructionInput(n, rec.ConstructionT))
			rec.ClusterStart = true
		}
	}
	res, err := search.Maximize(maps, o, done)
	if err != nil {
		return Record{}, nil, err
	}
	rec.Lower, rec.LowerMedian, rec.BestStart = res.Best, stats.Median(res.PerStart), res.Start
	if random := res.PerStart[len(o.Init):]; len(random) > 0 {
		best := slices.Max(random)
		rec.LowerRandom = &best
	}
	upper, asStated, err := c.upperBounds(a, n)
	switch {
	case errors.Is(err, errNoBound):
	case err != nil:
		return Record{}, nil, err
	default:
		ratio := res.Best / upper
		rec.Upper, rec.Ratio = &upper, &ratio
		if asStated > 0 {
			rec.UpperAsStated = &asStated
		}
		if res.Best > upper {
			rec.X = res.X // a violation of the bound: keep the input
		}
		if err := c.otherBounds(a, maps[0], n, res.X, &rec); err != nil {
			return Record{}, nil, err
		}
	}
	rec.Seconds = time.Since(start).Seconds()
	return rec, res.X, nil
}

// newRecord fills the settings of a record.
func (c *Config) newRecord(n int, r float64) Record {
	engine := EngineGraph
	if c.useScalar() {
		engine = EngineScalar
	}
	o := c.Search
	return Record{Attn: c.Kind.String(), Norm: o.Norm.String(), N: n, D: c.Dim, Heads: c.Heads, Causal: c.Causal,
		Weights: c.Weights, Radius: r, PhiInv: lipschitz.PhiInv(n), Inits: o.Starts, Steps: o.Steps, Refresh: o.Refresh, LR: o.LR,
		Escape: o.Escape, Restarts: o.Restarts, Perturb: o.Perturb, InitMin: o.InitMin, InitMax: o.InitMax, Seed: o.Seed, Engine: engine}
}
