package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"

	"lipformer/expressive"
)

// readCells reads the "cell" lines of earlier -json outputs (other lines are skipped) and
// groups them by (method, k) in order of first appearance, each group sorted by L. A
// later line for the same (method, k, L) replaces an earlier one.
func readCells(paths []string) ([]*group, error) {
	var groups []*group
	find := func(method string, k int) *group {
		for _, g := range groups {
			if g.method == method && g.k == k {
				return g
			}
		}
		g := &group{method: method, k: k}
		groups = append(groups, g)
		return g
	}
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("-in: %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for line := 1; sc.Scan(); line++ {
			var rec cellJSON
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				f.Close()
				return nil, fmt.Errorf("-in %s line %d: %w", path, line, err)
			}
			if rec.Type != "cell" {
				continue
			}
			g := find(rec.Method, rec.K)
			res := rec.result()
			replaced := false
			for i, r := range g.results {
				if r.Cell.L == rec.L {
					g.results[i], replaced = res, true
				}
			}
			if !replaced {
				g.results = append(g.results, res)
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("-in %s: %w", path, err)
		}
	}
	for _, g := range groups {
		sort.Slice(g.results, func(i, j int) bool { return g.results[i].Cell.L < g.results[j].Cell.L })
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("-in: no cell records found")
	}
	return groups, nil
}

// result rebuilds the cell result of a JSON line; a null measure becomes NaN.
func (rec cellJSON) result() expressive.CellResult {
	c := expressive.Cell{Method: rec.Method, L: rec.L, K: rec.K, Trials: rec.Trials, Eps: rec.Eps,
		Delta: rec.Delta, Range: rec.Range, Seed: rec.Seed}
	if rec.Margin != nil {
		c.Margin = *rec.Margin
	}
	sr := expressive.SearchResult{Found: rec.Found, D: rec.DMin, FailBelow: rec.FailBelow}
	for _, t := range rec.Tried {
		sr.Tried = append(sr.Tried, expressive.DResult{D: t.D, Successes: t.Successes, Trials: t.Trials,
			Rate: t.Rate, Pass: t.Pass, MaxLogRatio: orNaN(t.MaxLogRatio), MaxLogLeak: orNaN(t.MaxLogLeak),
			MaxAbsLogit: t.MaxAbsLogit, MeanIterations: t.MeanIterations})
	}
	return expressive.CellResult{Cell: c, Search: sr, Seconds: rec.Seconds}
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
