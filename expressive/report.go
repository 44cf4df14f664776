package expressive

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
)

// atD returns the trials at the reported d.
func atD(r CellResult) (DResult, bool) {
	for _, t := range r.Search.Tried {
		if r.Search.Found && t.D == r.Search.D {
			return t, true
		}
	}
	return DResult{}, false
}

// WriteTable writes the smallest d per cell and the fits per (method, margin, k). For jl
// it gives, at d_min, the common margin that realises the most targets, the range of
// margins that do as well, and how many targets that is (with margin target each target
// uses its own margin, so the rate at d_min may exceed it).
func WriteTable(w io.Writer, groups []*Group) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "method\tmargin\tk\tL\td_min\tfails at\trate at d_min\tbest margin\tmargins as good\tat best margin\tworst ratio err\tworst leak\tmax |logit|\tgd steps\td tried\tseconds\t")
	for _, g := range groups {
		for _, r := range g.Results {
			dmin, ratio, leak, logit, steps, rate := "none", "-", "-", "-", "-", "-"
			best, as, common := "-", "-", "-"
			if t, ok := atD(r); ok {
				dmin = strconv.Itoa(r.Search.D)
				rate = fmt.Sprintf("%d/%d", t.Successes, t.Trials)
				ratio = fmt.Sprintf("%.3g", math.Expm1(t.MaxLogRatio))
				leak = fmt.Sprintf("%.3g", math.Exp(t.MaxLogLeak))
				logit = fmt.Sprintf("%.3g", t.MaxAbsLogit)
				if g.Method == MethodGD {
					steps = fmt.Sprintf("%.0f", t.MeanIterations)
				} else {
					best = fmt.Sprintf("%.3g", t.Margin)
					as = fmt.Sprintf("[%.3g, %.3g]", t.MarginLo, t.MarginHi)
					common = fmt.Sprintf("%d/%d", t.CommonSuccesses, t.Trials)
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%.1f\t\n", g.Method, orDash(g.Margin), g.K, r.Cell.L, dmin,
				r.Search.FailBelow, rate, best, as, common, ratio, leak, logit, steps, len(r.Search.Tried), r.Seconds)
		}
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "method\tmargin\tk\tfit d = a + b log L\tR^2\tfit d = a + b L\tR^2\tpoints\t")
	for _, g := range groups {
		if !g.Fitted {
			fmt.Fprintf(tw, "%s\t%s\t%d\t(fewer than 2 lengths with a d)\t\t\t\t\t\n", g.Method, orDash(g.Margin), g.K)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.4g + %.4g log L\t%.4f\t%.4g + %.4g L\t%.4f\t%d\t\n", g.Method, orDash(g.Margin), g.K,
			g.LogFit.A, g.LogFit.B, g.LogFit.R2, g.LinFit.A, g.LinFit.B, g.LinFit.R2, g.LogFit.N)
	}
	_ = tw.Flush()
}

// orDash returns s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteCSV writes a header and one row per (method, margin, k, L) to out; the margin
// columns at d_min are those of WriteTable (empty for gd).
func WriteCSV(out io.Writer, groups []*Group) error {
	w := csv.NewWriter(out)
	_ = w.Write([]string{"method", "margin", "k", "L", "found", "d_min", "d_fail_below", "successes", "trials",
		"best_margin", "margin_lo", "margin_hi", "common_successes", "evaluations", "seconds"})
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
	for _, g := range groups {
		for _, r := range g.Results {
			t, _ := atD(r)
			best, lo, hi, common := "", "", "", ""
			if g.Method == MethodJL {
				best, lo, hi, common = num(t.Margin), num(t.MarginLo), num(t.MarginHi), strconv.Itoa(t.CommonSuccesses)
			}
			_ = w.Write([]string{g.Method, g.Margin, strconv.Itoa(g.K), strconv.Itoa(r.Cell.L), strconv.FormatBool(r.Search.Found),
				strconv.Itoa(r.Search.D), strconv.Itoa(r.Search.FailBelow), strconv.Itoa(t.Successes), strconv.Itoa(t.Trials),
				best, lo, hi, common, strconv.Itoa(len(r.Search.Tried)), strconv.FormatFloat(r.Seconds, 'f', 3, 64)})
		}
	}
	w.Flush()
	return w.Error()
}
