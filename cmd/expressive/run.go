package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"lipformer/expressive"
	"lipformer/internal/cli"
)

// run parses args, runs every cell (or reads them with -in), and writes the table, JSON,
// CSV and plot.
func run(args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	human := stdout
	if c.json {
		human = stderr
	}
	enc := json.NewEncoder(stdout)
	var groups []*expressive.Group
	if len(c.inPaths) > 0 {
		if groups, err = expressive.ReadCells(c.inPaths); err != nil {
			return fmt.Errorf("-in: %w", err)
		}
		if c.json {
			for _, g := range groups {
				for _, r := range g.Results {
					if err := enc.Encode(r.Record()); err != nil {
						return err
					}
				}
			}
		}
	} else if groups, err = c.runCells(enc, stderr); err != nil {
		return err
	}
	for _, g := range groups {
		if c.json && g.Fitted {
			for _, rec := range g.FitRecords() {
				if err := enc.Encode(rec); err != nil {
					return err
				}
			}
		}
	}
	expressive.WriteTable(human, groups)
	if c.csvPath != "" {
		if err := writeCSV(c.csvPath, groups); err != nil {
			return fmt.Errorf("-csv: %w", err)
		}
	}
	if c.plotPath != "" {
		if err := expressive.SavePlot(c.plotPath, groups); err != nil {
			return fmt.Errorf("-plot: %w", err)
		}
	}
	return nil
}

// runCells runs the experiment with a progress bar on stderr, streaming a JSON line per
// cell to enc with -json.
func (c *config) runCells(enc *json.Encoder, stderr io.Writer) ([]*expressive.Group, error) {
	cells := c.exp.Cells()
	if len(cells) == 0 {
		return nil, fmt.Errorf("no cell to run: gd needs some L <= -gd-L-max")
	}
	bar := cli.Bar(stderr, len(cells), "cells")
	var p expressive.Progress
	if bar != nil {
		p.Tried = func(cell expressive.Cell, r expressive.DResult) {
			bar.Describe(fmt.Sprintf("%s k=%d L=%d: d=%d rate %.2f", cell.Method, cell.K, cell.L, r.D, r.Rate))
		}
	}
	p.Done = func(r expressive.CellResult) error {
		if c.json {
			if err := enc.Encode(r.Record()); err != nil {
				return err
			}
		}
		if bar != nil {
			_ = bar.Add(1)
		}
		return nil
	}
	groups, err := c.exp.Run(p)
	if err != nil {
		return nil, err
	}
	if bar != nil {
		_ = bar.Finish()
		fmt.Fprintln(stderr)
	}
	return groups, nil
}

// writeCSV writes the cells as CSV to a new file at path.
func writeCSV(path string, groups []*expressive.Group) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := expressive.WriteCSV(f, groups); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
