package expressive

import (
	"fmt"

	"lipformer/internal/stats"
)

// Experiment is a grid of cells: every method, sparsity k and length L, with the trial
// settings shared by every cell and the search over d of each method.
type Experiment struct {
	Methods []string // MethodJL, MethodGD
	Ks, Ls  []int
	Trials  int        // targets per d
	Eps     float64    // precision
	Delta   float64    // a d passes when the success rate is >= 1 - Delta
	Range   float64    // target values are log-uniform on [1, Range]
	Margins MarginMode // jl: how the margin of Delta = log(1/eps) + margin is chosen
	Margin  float64    // jl: the margin of MarginFixed
	GD      GDOptions
	GDLMax  int  // gd runs only for L <= GDLMax
	GDFull  bool // gd runs every trial at each d instead of stopping once pass or fail is decided
	Seed    uint64
	// JLSearch and GDSearch bound the search over d of each method.
	JLSearch, GDSearch SearchOptions
}

// Group is the results of one (method, margin, k) across L, in increasing L, with the
// fits of the smallest d against log L and L when at least two lengths found one.
type Group struct {
	Method  string
	Margin  string // jl: the fixed margin, "cell" or "target" (Cell.MarginLabel); gd: ""
	K       int
	Results []CellResult
	Fitted  bool
	LogFit  stats.Line // d = A + B log L
	LinFit  stats.Line // d = A + B L
}

// Progress receives the experiment's progress; a nil field is not called.
type Progress struct {
	// Tried is called after the trials at each d of a cell.
	Tried func(c Cell, r DResult)
	// Done receives each cell's result as soon as it is complete; an error ends the run.
	Done func(CellResult) error
}

// Cells lists the experiment's cells in the order method, k, L; gd only at L <= GDLMax.
func (e Experiment) Cells() []Cell {
	var out []Cell
	for _, m := range e.Methods {
		for _, k := range e.Ks {
			for _, L := range e.Ls {
				if m == MethodGD && L > e.GDLMax {
					continue
				}
				out = append(out, Cell{
					Method: m, L: L, K: k, Trials: e.Trials, Eps: e.Eps, Delta: e.Delta,
					Range: e.Range, Margins: e.Margins, Margin: e.Margin, GD: e.GD,
					EarlyStop: m == MethodGD && !e.GDFull, Seed: e.Seed,
				})
			}
		}
	}
	return out
}

// Search returns the search bounds of a method.
func (e Experiment) Search(method string) SearchOptions {
	if method == MethodGD {
		return e.GDSearch
	}
	return e.JLSearch
}

// Run runs every cell of Cells in order and returns them grouped by (method, margin, k),
// each group fitted.
func (e Experiment) Run(p Progress) ([]*Group, error) {
	cells := e.Cells()
	if len(cells) == 0 {
		return nil, fmt.Errorf("expressive: no cell to run: gd needs some L <= GDLMax")
	}
	var groups []*Group
	for _, cell := range cells {
		if len(groups) == 0 || !groups[len(groups)-1].holds(cell) {
			groups = append(groups, &Group{Method: cell.Method, Margin: cell.MarginLabel(), K: cell.K})
		}
		g := groups[len(groups)-1]
		var tried func(DResult)
		if p.Tried != nil {
			tried = func(r DResult) { p.Tried(cell, r) }
		}
		res, err := cell.Run(e.Search(cell.Method), tried)
		if err != nil {
			return nil, err
		}
		g.Results = append(g.Results, res)
		if p.Done != nil {
			if err := p.Done(res); err != nil {
				return nil, err
			}
		}
	}
	for _, g := range groups {
		g.Fit()
	}
	return groups, nil
}

// holds reports whether the cell belongs to the group.
func (g *Group) holds(c Cell) bool {
	return g.Method == c.Method && g.Margin == c.MarginLabel() && g.K == c.K
}

// Name is the group's method with its margin for jl, as in "jl (margin target)".
func (g *Group) Name() string {
	if g.Margin == "" {
		return g.Method
	}
	return fmt.Sprintf("%s (margin %s)", g.Method, g.Margin)
}

// Fit fits the smallest d against log L and L over the cells where one was found
// (FitD), setting Fitted, LogFit and LinFit.
func (g *Group) Fit() {
	var Ls, ds []int
	for _, r := range g.Results {
		if r.Search.Found {
			Ls = append(Ls, r.Cell.L)
			ds = append(ds, r.Search.D)
		}
	}
	var err error
	g.LogFit, g.LinFit, err = FitD(Ls, ds)
	g.Fitted = err == nil
}
