package tightness

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// WriteTable writes one line per record, then every lower bound above its upper bound
// and the fits of c's records (Fits).
func WriteTable(w io.Writer, c Config, recs []Record) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "attn\tnorm\tN\tR\tupper\tlower\tratio\trandom starts\tmedian start\tconstruction\tW0((N-1)/e)\tseconds\t\n")
	for _, r := range recs {
		radius := "none"
		if r.Radius > 0 {
			radius = strconv.FormatFloat(r.Radius, 'g', -1, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%.5g\t%s\t%s\t%.5g\t%.5g\t%.4f\t%.1f\t\n", r.Attn, r.Norm, r.N, radius,
			optional(r.Upper, "%.5g"), r.Lower, optional(r.Ratio, "%.4f"), optional(r.LowerRandom, "%.5g"), r.LowerMedian,
			r.Construction, r.PhiInv, r.Seconds)
	}
	_ = tw.Flush()
	for _, r := range recs {
		if r.Upper != nil && r.Lower > *r.Upper {
			fmt.Fprintf(w, "FINDING: N = %d: lower bound %.10g exceeds the upper bound %.10g (input in the JSON record)\n", r.N, r.Lower, *r.Upper)
		}
	}
	for _, f := range Fits(c, recs) {
		fmt.Fprintln(w, f)
	}
}

// optional formats a nullable number, "-" for null.
func optional(v *float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}

// WriteCSV writes a header and one row per record to out.
func WriteCSV(out io.Writer, recs []Record) error {
	w := csv.NewWriter(out)
	_ = w.Write([]string{"attn", "norm", "n", "d", "heads", "causal", "weights", "radius", "upper", "lower", "ratio",
		"upper_as_stated", "upper_product", "ratio_product", "upper_token2", "lower_token2", "ratio_token2", "lower_median",
		"lower_random", "warm_start", "cluster_start", "construction", "construction_t", "phi_inv", "inits", "steps", "restarts",
		"perturb", "escape", "lr",
		"seed", "engine", "seconds"})
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return num(*v)
	}
	for _, r := range recs {
		_ = w.Write([]string{r.Attn, r.Norm, strconv.Itoa(r.N), strconv.Itoa(r.D), strconv.Itoa(r.Heads),
			strconv.FormatBool(r.Causal), r.Weights, num(r.Radius), opt(r.Upper), num(r.Lower), opt(r.Ratio),
			opt(r.UpperAsStated), opt(r.UpperProduct), opt(r.RatioProduct), opt(r.UpperTok2), opt(r.LowerTok2),
			opt(r.RatioTok2), num(r.LowerMedian), opt(r.LowerRandom), strconv.FormatBool(r.WarmStart), strconv.FormatBool(r.ClusterStart),
			num(r.Construction), num(r.ConstructionT), num(r.PhiInv), strconv.Itoa(r.Inits), strconv.Itoa(r.Steps),
			strconv.Itoa(r.Restarts), num(r.Perturb), num(r.Escape), num(r.LR), strconv.FormatUint(r.Seed, 10), r.Engine, num(r.Seconds)})
	}
	w.Flush()
	return w.Error()
}
