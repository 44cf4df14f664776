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

// WriteTable writes the smallest d per cell and the fits per (method, k).
func WriteTable(w io.Writer, groups []*Group) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "method\tk\tL\td_min\tfails at\trate at d_min\tworst ratio err\tworst leak\tmax |logit|\tgd steps\td tried\tseconds\t")
	for _, g := range groups {
		for _, r := range g.Results {
			dmin, ratio, leak, logit, steps, rate := "none", "-", "-", "-", "-", "-"
			if t, ok := atD(r); ok {
				dmin = strconv.Itoa(r.Search.D)
				rate = fmt.Sprintf("%d/%d", t.Successes, t.Trials)
				ratio = fmt.Sprintf("%.3g", math.Expm1(t.MaxLogRatio))
				leak = fmt.Sprintf("%.3g", math.Exp(t.MaxLogLeak))
				logit = fmt.Sprintf("%.3g", t.MaxAbsLogit)
				if g.Method == MethodGD {
					steps = fmt.Sprintf("%.0f", t.MeanIterations)
				}
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%.1f\t\n", g.Method, g.K, r.Cell.L, dmin,
				r.Search.FailBelow, rate, ratio, leak, logit, steps, len(r.Search.Tried), r.Seconds)
		}
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "method\tk\tfit d = a + b log L\tR^2\tfit d = a + b L\tR^2\tpoints\t")
	for _, g := range groups {
		if !g.Fitted {
			fmt.Fprintf(tw, "%s\t%d\t(fewer than 2 lengths with a d)\t\t\t\t\t\n", g.Method, g.K)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%.4g + %.4g log L\t%.4f\t%.4g + %.4g L\t%.4f\t%d\t\n", g.Method, g.K,
			g.LogFit.A, g.LogFit.B, g.LogFit.R2, g.LinFit.A, g.LinFit.B, g.LinFit.R2, g.LogFit.N)
	}
	_ = tw.Flush()
}

// WriteCSV writes a header and one row per (method, k, L) to out.
func WriteCSV(out io.Writer, groups []*Group) error {
	w := csv.NewWriter(out)
	_ = w.Write([]string{"method", "k", "L", "found", "d_min", "d_fail_below", "successes", "trials", "evaluations", "seconds"})
	for _, g := range groups {
		for _, r := range g.Results {
			t, _ := atD(r)
			_ = w.Write([]string{g.Method, strconv.Itoa(g.K), strconv.Itoa(r.Cell.L), strconv.FormatBool(r.Search.Found),
				strconv.Itoa(r.Search.D), strconv.Itoa(r.Search.FailBelow), strconv.Itoa(t.Successes), strconv.Itoa(t.Trials),
				strconv.Itoa(len(r.Search.Tried)), strconv.FormatFloat(r.Seconds, 'f', 3, 64)})
		}
	}
	w.Flush()
	return w.Error()
}
