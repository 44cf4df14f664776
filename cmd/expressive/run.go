package main

import (
	"fmt"
	"io"

	"lipformer/expressive"
	"lipformer/internal/cli"
	"lipformer/internal/stats"
)

// group is the results of one (method, k) across L, with its fits when there are any.
type group struct {
	method      string
	k           int
	results     []expressive.CellResult
	fitted      bool
	logFit, lin stats.Line
}

// run parses args, runs every cell, and writes the table, JSON, CSV and plot.
func run(args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	human := stdout
	if c.json {
		human = stderr
	}
	var groups []*group
	if len(c.inPaths) > 0 {
		if groups, err = readCells(c.inPaths); err != nil {
			return err
		}
		if c.json {
			for _, g := range groups {
				for _, r := range g.results {
					if err := writeJSON(stdout, cellRecord(r)); err != nil {
						return err
					}
				}
			}
		}
	} else if groups, err = c.runCells(stdout, stderr); err != nil {
		return err
	}
	for _, g := range groups {
		g.fit()
		if c.json && g.fitted {
			for _, rec := range fitRecords(g) {
				if err := writeJSON(stdout, rec); err != nil {
					return err
				}
			}
		}
	}
	writeTable(human, groups)
	if c.csvPath != "" {
		if err := writeCSV(c.csvPath, groups); err != nil {
			return err
		}
	}
	if c.plotPath != "" {
		if err := writePlot(c.plotPath, groups); err != nil {
			return err
		}
	}
	return nil
}

// runCells runs every cell of the command line, streaming a JSON line per cell with -json.
func (c *config) runCells(stdout, stderr io.Writer) ([]*group, error) {
	cells := c.cells()
	if len(cells) == 0 {
		return nil, fmt.Errorf("no cell to run: gd needs some L <= -gd-L-max")
	}
	bar := cli.Bar(stderr, len(cells), "cells")
	var groups []*group
	for _, cell := range cells {
		if len(groups) == 0 || groups[len(groups)-1].method != cell.Method || groups[len(groups)-1].k != cell.K {
			groups = append(groups, &group{method: cell.Method, k: cell.K})
		}
		g := groups[len(groups)-1]
		progress := func(r expressive.DResult) {
			if bar != nil {
				bar.Describe(fmt.Sprintf("%s k=%d L=%d: d=%d rate %.2f", cell.Method, cell.K, cell.L, r.D, r.Rate))
			}
		}
		res, err := cell.Run(c.search(cell.Method), progress)
		if err != nil {
			return nil, err
		}
		g.results = append(g.results, res)
		if c.json {
			if err := writeJSON(stdout, cellRecord(res)); err != nil {
				return nil, err
			}
		}
		if bar != nil {
			_ = bar.Add(1)
		}
	}
	if bar != nil {
		_ = bar.Finish()
		fmt.Fprintln(stderr)
	}
	return groups, nil
}

// cells lists the experiment's cells in the order method, k, L.
func (c *config) cells() []expressive.Cell {
	var out []expressive.Cell
	for _, m := range c.methods {
		for _, k := range c.ks {
			for _, L := range c.Ls {
				if m == expressive.MethodGD && L > c.gdLMax {
					continue
				}
				out = append(out, expressive.Cell{
					Method: m, L: L, K: k, Trials: c.trials, Eps: c.eps, Delta: c.delta,
					Range: c.ratio, Margin: c.margin, GD: c.gd,
					EarlyStop: m == expressive.MethodGD && !c.gdFull, Seed: c.seed,
				})
			}
		}
	}
	return out
}

// search returns the search bounds of a method.
func (c *config) search(method string) expressive.SearchOptions {
	if method == expressive.MethodGD {
		return expressive.SearchOptions{Start: c.gdDStart, Max: c.gdDMax, RelTol: c.gdRelTol, Walk: c.gdWalk}
	}
	return expressive.SearchOptions{Start: 1, Max: c.dMax, RelTol: c.relTol}
}

// fit fits the smallest d against log L and L over the cells where one was found.
func (g *group) fit() {
	var Ls, ds []int
	for _, r := range g.results {
		if r.Search.Found {
			Ls = append(Ls, r.Cell.L)
			ds = append(ds, r.Search.D)
		}
	}
	var err error
	g.logFit, g.lin, err = expressive.FitD(Ls, ds)
	g.fitted = err == nil
}
