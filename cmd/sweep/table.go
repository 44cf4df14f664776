package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"lipformer/internal/atomicfile"
	"lipformer/train"
)

// Files of the summary table in the sweep's output directory.
const (
	csvFile      = "sweep.csv"
	markdownFile = "sweep.md"
)

// Status of a run in the table.
const (
	statusDone        = "done"        // ran all its steps
	statusNonFinite   = "non-finite"  // stopped at a non-finite loss or gradient
	statusInterrupted = "interrupted" // stopped by a signal, to be resumed
	statusPending     = "pending"     // not run yet (or crashed before its summary)
)

// row is one run's line of the table. Missing values are NaN (floats) or -1 (counts).
type row struct {
	spec
	status         string
	steps          int
	finalVal       float64
	bestVal        float64
	test           float64
	diverged       bool
	firstNonFinite int
	spikes         int
	maxGradNorm    float64
	seconds        float64
}

// readRow makes the table row of s from its directory in out.
func readRow(out string, s spec) (row, error) {
	nan := math.NaN()
	r := row{spec: s, status: statusPending, steps: -1, finalVal: nan, bestVal: nan, test: nan, firstNonFinite: -1,
		spikes: -1, maxGradNorm: nan, seconds: nan}
	d, err := train.OpenRun(filepath.Join(out, s.name()))
	if err != nil || d.Summary() == nil {
		return r, err
	}
	sum := d.Summary()
	switch {
	case sum.Interrupted:
		r.status = statusInterrupted
	case sum.NonFinite:
		r.status = statusNonFinite
	default:
		r.status = statusDone
		r.finalVal, r.test = float64(sum.FinalValBPC), float64(sum.TestBPC)
	}
	stab := sum.Stability
	r.steps, r.diverged, r.spikes, r.maxGradNorm = sum.Steps, stab.Diverged || sum.NonFinite, stab.LossSpikes, stab.MaxGradNorm
	if stab.FirstNonFiniteStep >= 0 {
		r.firstNonFinite = stab.FirstNonFiniteStep
	}
	if sum.BestStep >= 0 {
		r.bestVal = float64(sum.BestValBPC)
	}
	m, err := d.Metrics()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.seconds = sum.Seconds
		return r, nil
	case err != nil:
		return r, err
	}
	r.seconds = sum.Seconds + m.EarlierSessions()
	if sum.BestStep < 0 {
		r.bestVal = bestValBPC(m)
	}
	return r, nil
}

// bestValBPC returns the lowest finite validation bpc of the log, or NaN: the summary
// of a run stopped at a non-finite loss does not record it.
func bestValBPC(m train.Metrics) float64 {
	best := math.NaN()
	for _, e := range m.Eval {
		if v := e.ValBPC(); !math.IsNaN(v) && !math.IsInf(v, 0) && !(v >= best) {
			best = v
		}
	}
	return best
}

// columns of the table: CSV header, Markdown header, and the cell of a row.
type column struct {
	csv, md string
	cell    func(r row) string
}

// columns lists the table's columns in order.
func columns() []column {
	num := func(x float64, prec int) string {
		if math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'f', prec, 64)
	}
	count := func(n int) string {
		if n < 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	yesNo := func(r row) string {
		switch {
		case r.status == statusPending:
			return ""
		case r.diverged:
			return "yes"
		}
		return "no"
	}
	return []column{
		{"run", "run", func(r row) string { return r.name() }},
		{"arch", "arch", func(r row) string { return r.cfg.Arch }},
		{"depth", "depth", func(r row) string { return strconv.Itoa(r.cfg.Layers) }},
		{"norm", "norm", func(r row) string { return r.cfg.Norm }},
		{"seed", "seed", func(r row) string { return strconv.FormatUint(r.opt.Seed, 10) }},
		{"status", "status", func(r row) string { return r.status }},
		{"steps", "steps", func(r row) string { return count(r.steps) }},
		{"final_val_bpc", "final val bpc", func(r row) string { return num(r.finalVal, 4) }},
		{"best_val_bpc", "best val bpc", func(r row) string { return num(r.bestVal, 4) }},
		{"test_bpc", "test bpc", func(r row) string { return num(r.test, 4) }},
		{"diverged", "diverged", yesNo},
		{"first_nonfinite_step", "first non-finite step", func(r row) string { return count(r.firstNonFinite) }},
		{"loss_spikes", "loss spikes", func(r row) string { return count(r.spikes) }},
		{"max_grad_norm", "max grad norm", func(r row) string {
			if math.IsNaN(r.maxGradNorm) {
				return ""
			}
			return strconv.FormatFloat(r.maxGradNorm, 'g', 4, 64)
		}},
		{"seconds", "time (s)", func(r row) string { return num(r.seconds, 1) }},
	}
}

// writeTables writes the rows to out/sweep.csv and out/sweep.md, each atomically.
func writeTables(out string, rows []row) error {
	if err := atomicfile.Write(filepath.Join(out, csvFile), func(w io.Writer) error { return writeCSV(w, rows) }); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(out, markdownFile), func(w io.Writer) error { return writeMarkdown(w, rows) })
}

// writeCSV writes the table as CSV with a header line; missing values are empty.
func writeCSV(w io.Writer, rows []row) error {
	cw := csv.NewWriter(w)
	cols := columns()
	line := make([]string, len(cols))
	for i, c := range cols {
		line[i] = c.csv
	}
	cw.Write(line)
	for _, r := range rows {
		for i, c := range cols {
			line[i] = c.cell(r)
		}
		cw.Write(line)
	}
	cw.Flush()
	return cw.Error()
}

// writeMarkdown writes the table as a Markdown table; missing values are "–".
func writeMarkdown(w io.Writer, rows []row) error {
	cols := columns()
	cells := make([]string, len(cols))
	var b strings.Builder
	line := func() { fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | ")) }
	for i, c := range cols {
		cells[i] = c.md
	}
	line()
	for i := range cols {
		cells[i] = "---"
	}
	line()
	for _, r := range rows {
		for i, c := range cols {
			if cells[i] = c.cell(r); cells[i] == "" {
				cells[i] = "–"
			}
		}
		line()
	}
	_, err := io.WriteString(w, b.String())
	return err
}
