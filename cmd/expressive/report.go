package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"text/tabwriter"

	"lipformer/expressive"
)

// dRecord is the JSON form of the trials at one d.
type dRecord struct {
	D              int      `json:"d"`
	Successes      int      `json:"successes"`
	Trials         int      `json:"trials"`
	Rate           float64  `json:"rate"`
	Pass           bool     `json:"pass"`
	MaxLogRatio    *float64 `json:"max_log_ratio"` // null when not finite
	MaxLogLeak     *float64 `json:"max_log_leak"`  // null when not finite (-Inf: no off-support entry)
	MaxAbsLogit    float64  `json:"max_abs_logit"`
	MeanIterations float64  `json:"mean_iterations,omitempty"`
}

// cellJSON is the JSON line of one (method, L, k).
type cellJSON struct {
	Type      string    `json:"type"`
	Method    string    `json:"method"`
	L         int       `json:"L"`
	K         int       `json:"k"`
	Eps       float64   `json:"eps"`
	Delta     float64   `json:"delta"`
	Trials    int       `json:"trials"`
	Range     float64   `json:"range"`
	Margin    *float64  `json:"margin,omitempty"`
	Seed      uint64    `json:"seed"`
	Found     bool      `json:"found"`
	DMin      int       `json:"d_min,omitempty"`
	FailBelow int       `json:"d_fail_below"`
	Seconds   float64   `json:"seconds"`
	Tried     []dRecord `json:"tried"`
}

// fitJSON is the JSON line of one fit of d against x = log L or x = L.
type fitJSON struct {
	Type   string  `json:"type"`
	Method string  `json:"method"`
	K      int     `json:"k"`
	X      string  `json:"x"`
	A      float64 `json:"a"`
	B      float64 `json:"b"`
	R2     float64 `json:"r2"`
	N      int     `json:"n"`
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func cellRecord(r expressive.CellResult) cellJSON {
	c := r.Cell
	rec := cellJSON{Type: "cell", Method: c.Method, L: c.L, K: c.K, Eps: c.Eps, Delta: c.Delta,
		Trials: c.Trials, Range: c.Range, Seed: c.Seed, Found: r.Search.Found, FailBelow: r.Search.FailBelow,
		Seconds: r.Seconds}
	if c.Method == expressive.MethodJL {
		rec.Margin = &c.Margin
	}
	if r.Search.Found {
		rec.DMin = r.Search.D
	}
	for _, t := range r.Search.Tried {
		rec.Tried = append(rec.Tried, dRecord{D: t.D, Successes: t.Successes, Trials: t.Trials, Rate: t.Rate,
			Pass: t.Pass, MaxLogRatio: finite(t.MaxLogRatio), MaxLogLeak: finite(t.MaxLogLeak), MaxAbsLogit: t.MaxAbsLogit, MeanIterations: t.MeanIterations})
	}
	return rec
}

func fitRecords(g *group) []fitJSON {
	return []fitJSON{
		{Type: "fit", Method: g.method, K: g.k, X: "log L", A: g.logFit.A, B: g.logFit.B, R2: g.logFit.R2, N: g.logFit.N},
		{Type: "fit", Method: g.method, K: g.k, X: "L", A: g.lin.A, B: g.lin.B, R2: g.lin.R2, N: g.lin.N},
	}
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// atD returns the trials at the reported d.
func atD(r expressive.CellResult) (expressive.DResult, bool) {
	for _, t := range r.Search.Tried {
		if r.Search.Found && t.D == r.Search.D {
			return t, true
		}
	}
	return expressive.DResult{}, false
}

// writeTable writes the smallest d per cell and the fits per (method, k).
func writeTable(w io.Writer, groups []*group) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "method\tk\tL\td_min\tfails at\trate at d_min\tworst ratio err\tworst leak\tmax |logit|\tgd steps\td tried\tseconds\t")
	for _, g := range groups {
		for _, r := range g.results {
			dmin, ratio, leak, logit, steps, rate := "none", "-", "-", "-", "-", "-"
			if t, ok := atD(r); ok {
				dmin = strconv.Itoa(r.Search.D)
				rate = fmt.Sprintf("%d/%d", t.Successes, t.Trials)
				ratio = fmt.Sprintf("%.3g", math.Expm1(t.MaxLogRatio))
				leak = fmt.Sprintf("%.3g", math.Exp(t.MaxLogLeak))
				logit = fmt.Sprintf("%.3g", t.MaxAbsLogit)
				if g.method == expressive.MethodGD {
					steps = fmt.Sprintf("%.0f", t.MeanIterations)
				}
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%.1f\t\n", g.method, g.k, r.Cell.L, dmin,
				r.Search.FailBelow, rate, ratio, leak, logit, steps, len(r.Search.Tried), r.Seconds)
		}
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "method\tk\tfit d = a + b log L\tR^2\tfit d = a + b L\tR^2\tpoints\t")
	for _, g := range groups {
		if !g.fitted {
			fmt.Fprintf(tw, "%s\t%d\t(fewer than 2 lengths with a d)\t\t\t\t\t\n", g.method, g.k)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%.4g + %.4g log L\t%.4f\t%.4g + %.4g L\t%.4f\t%d\t\n", g.method, g.k,
			g.logFit.A, g.logFit.B, g.logFit.R2, g.lin.A, g.lin.B, g.lin.R2, g.logFit.N)
	}
	_ = tw.Flush()
}

// writeCSV writes one row per (method, k, L).
func writeCSV(path string, groups []*group) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-csv: %w", err)
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"method", "k", "L", "found", "d_min", "d_fail_below", "successes", "trials", "evaluations", "seconds"})
	for _, g := range groups {
		for _, r := range g.results {
			t, _ := atD(r)
			_ = w.Write([]string{g.method, strconv.Itoa(g.k), strconv.Itoa(r.Cell.L), strconv.FormatBool(r.Search.Found),
				strconv.Itoa(r.Search.D), strconv.Itoa(r.Search.FailBelow), strconv.Itoa(t.Successes), strconv.Itoa(t.Trials),
				strconv.Itoa(len(r.Search.Tried)), strconv.FormatFloat(r.Seconds, 'f', 3, 64)})
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("-csv: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("-csv: %w", err)
	}
	return nil
}
