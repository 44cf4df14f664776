package expressive

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

// ReadCells reads the "cell" lines (CellRecord) of files of JSON lines, skipping other
// lines, and groups them by (method, margin, k) in order of first appearance, each group
// sorted by L and fitted. A later line for the same (method, margin, k, L) replaces an
// earlier one.
func ReadCells(paths []string) ([]*Group, error) {
	var groups []*Group
	find := func(c Cell) *Group {
		for _, g := range groups {
			if g.holds(c) {
				return g
			}
		}
		g := &Group{Method: c.Method, Margin: c.MarginLabel(), K: c.K}
		groups = append(groups, g)
		return g
	}
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for line := 1; sc.Scan(); line++ {
			var rec CellRecord
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s line %d: %w", path, line, err)
			}
			if rec.Type != "cell" {
				continue
			}
			res, err := rec.result()
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("%s line %d: %w", path, line, err)
			}
			g := find(res.Cell)
			replaced := false
			for i, r := range g.Results {
				if r.Cell.L == rec.L {
					g.Results[i], replaced = res, true
				}
			}
			if !replaced {
				g.Results = append(g.Results, res)
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	for _, g := range groups {
		sort.Slice(g.Results, func(i, j int) bool { return g.Results[i].Cell.L < g.Results[j].Cell.L })
		g.Fit()
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("no cell records found")
	}
	return groups, nil
}
