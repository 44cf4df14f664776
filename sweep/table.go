package sweep

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
	CSVFile      = "sweep.csv"
	MarkdownFile = "sweep.md"
)

// Status of a run in the table.
const (
	StatusDone        = "done"        // ran all its steps
	StatusNonFinite   = "non-finite"  // stopped at a non-finite loss or gradient
	StatusInterrupted = "interrupted" // stopped by a signal, to be resumed
	StatusPending     = "pending"     // not run yet (or crashed before its summary)
)

// Row is one run's line of the table. Missing values are NaN (floats) or -1 (counts).
type Row struct {
	Spec
	Status         string  // StatusDone, ...
	Steps          int     // steps completed
	FinalVal       float64 // final validation bpc
	BestVal        float64 // best periodic validation bpc
	Test           float64 // test bpc
	Diverged       bool    // the stability record says diverged, or the run stopped at a non-finite value
	FirstNonFinite int     // the first step of a non-finite loss or gradient
	Spikes         int     // loss spikes
	MaxGradNorm    float64 // the largest gradient norm
	Seconds        float64 // training time, summed over the sessions
}

// ReadRow makes the table row of s from its directory in out.
func ReadRow(out string, s Spec) (Row, error) {
	nan := math.NaN()
	r := Row{Spec: s, Status: StatusPending, Steps: -1, FinalVal: nan, BestVal: nan, Test: nan, FirstNonFinite: -1,
		Spikes: -1, MaxGradNorm: nan, Seconds: nan}
	d, err := train.OpenRun(s.Dir(out))
	if err != nil || d.Summary() == nil {
		return r, err
	}
	sum := d.Summary()
	switch {
	case sum.Interrupted:
		r.Status = StatusInterrupted
	case sum.NonFinite:
		r.Status = StatusNonFinite
	default:
		r.Status = StatusDone
		r.FinalVal, r.Test = float64(sum.FinalValBPC), float64(sum.TestBPC)
	}
	stab := sum.Stability
	r.Steps, r.Diverged, r.Spikes, r.MaxGradNorm = sum.Steps, stab.Diverged || sum.NonFinite, stab.LossSpikes, stab.MaxGradNorm
	if stab.FirstNonFiniteStep >= 0 {
		r.FirstNonFinite = stab.FirstNonFiniteStep
	}
	if sum.BestStep >= 0 {
		r.BestVal = float64(sum.BestValBPC)
	}
	m, err := d.Metrics()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.Seconds = sum.Seconds
		return r, nil
	case err != nil:
		return r, err
	}
	r.Seconds = sum.Seconds + m.EarlierSessions()
	if sum.BestStep < 0 {
		r.BestVal = bestValBPC(m)
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

// columns of the table: CSV header, Markdown header, and the cell of a Row.
type column struct {
	csv, md string
	cell    func(r Row) string
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
	yesNo := func(r Row) string {
		switch {
		case r.Status == StatusPending:
			return ""
		case r.Diverged:
			return "yes"
		}
		return "no"
	}
	return []column{
		{"run", "run", func(r Row) string { return r.Name() }},
		{"arch", "arch", func(r Row) string { return r.Cfg.Arch.String() }},
		{"depth", "depth", func(r Row) string { return strconv.Itoa(r.Cfg.Layers) }},
		{"norm", "norm", func(r Row) string { return r.Cfg.Norm.String() }},
		{"seed", "seed", func(r Row) string { return strconv.FormatUint(r.Opt.Seed, 10) }},
		{"status", "status", func(r Row) string { return r.Status }},
		{"steps", "steps", func(r Row) string { return count(r.Steps) }},
		{"final_val_bpc", "final val bpc", func(r Row) string { return num(r.FinalVal, 4) }},
		{"best_val_bpc", "best val bpc", func(r Row) string { return num(r.BestVal, 4) }},
		{"test_bpc", "test bpc", func(r Row) string { return num(r.Test, 4) }},
		{"diverged", "diverged", yesNo},
		{"first_nonfinite_step", "first non-finite step", func(r Row) string { return count(r.FirstNonFinite) }},
		{"loss_spikes", "loss spikes", func(r Row) string { return count(r.Spikes) }},
		{"max_grad_norm", "max grad norm", func(r Row) string {
			if math.IsNaN(r.MaxGradNorm) {
				return ""
			}
			return strconv.FormatFloat(r.MaxGradNorm, 'g', 4, 64)
		}},
		{"seconds", "time (s)", func(r Row) string { return num(r.Seconds, 1) }},
	}
}

// WriteTables writes the rows to out/sweep.csv and out/sweep.md, each atomically.
func WriteTables(out string, rows []Row) error {
	if err := atomicfile.Write(filepath.Join(out, CSVFile), func(w io.Writer) error { return WriteCSV(w, rows) }); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(out, MarkdownFile), func(w io.Writer) error { return WriteMarkdown(w, rows) })
}

// WriteCSV writes the table as CSV with a header line; missing values are empty.
func WriteCSV(w io.Writer, rows []Row) error {
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

// WriteMarkdown writes the table as a Markdown table; missing values are "–".
func WriteMarkdown(w io.Writer, rows []Row) error {
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
