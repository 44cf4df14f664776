package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"
)

// record is the result of one (N, R), the JSON object written per line.
type record struct {
	Attn          string    `json:"attn"`
	Norm          string    `json:"norm"`
	N             int       `json:"n"`
	D             int       `json:"d"`
	Heads         int       `json:"heads"`
	Causal        bool      `json:"causal"`
	Weights       string    `json:"weights"`
	Radius        float64   `json:"radius"`          // box ||X||_inf <= R; 0: none
	Upper         *float64  `json:"upper"`           // upper bound on Lip_p; null for dp
	Lower         float64   `json:"lower"`           // best ||J(X)||_p found: a lower bound on Lip_p
	Ratio         *float64  `json:"ratio"`           // lower / upper; null for dp
	UpperAsStated *float64  `json:"upper_as_stated"` // [K]'s 2-norm formula as stated (not a bound); null for inf
	LowerMedian   float64   `json:"lower_median"`    // median over starts of each start's best
	LowerRandom   float64   `json:"lower_random"`    // best over the random starts only
	WarmStart     bool      `json:"warm_start"`      // start 0 began at the previous radius's best input
	Construction  float64   `json:"construction"`    // largest ||J||_p over the two-cluster inputs (see constructionInput)
	ConstructionT float64   `json:"construction_t"`  // their spread t
	BestStart     int       `json:"best_start"`
	PhiInv        float64   `json:"phi_inv"` // W_0((N-1)/e)
	Inits         int       `json:"inits"`
	Steps         int       `json:"steps"`
	Refresh       int       `json:"refresh"`
	LR            float64   `json:"lr"`
	InitMin       float64   `json:"init_min"`
	InitMax       float64   `json:"init_max"`
	Seed          uint64    `json:"seed"`
	Engine        string    `json:"engine"`
	Seconds       float64   `json:"seconds"`
	X             []float64 `json:"x,omitempty"` // the input, only when lower > upper
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// optional formats a nullable number, "-" for null.
func optional(v *float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}

// writeTable writes one line per (N, R), then the fits.
func writeTable(w io.Writer, c *config, recs []record) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "attn\tnorm\tN\tR\tupper\tlower\tratio\trandom starts\tmedian start\tconstruction\tW0((N-1)/e)\tseconds\t\n")
	for _, r := range recs {
		radius := "none"
		if r.Radius > 0 {
			radius = strconv.FormatFloat(r.Radius, 'g', -1, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%.5g\t%s\t%.5g\t%.5g\t%.5g\t%.4f\t%.1f\t\n", r.Attn, r.Norm, r.N, radius,
			optional(r.Upper, "%.5g"), r.Lower, optional(r.Ratio, "%.4f"), r.LowerRandom, r.LowerMedian,
			r.Construction, r.PhiInv, r.Seconds)
	}
	_ = tw.Flush()
	for _, r := range recs {
		if r.Upper != nil && r.Lower > *r.Upper {
			fmt.Fprintf(w, "FINDING: N = %d: lower bound %.10g exceeds the upper bound %.10g (input in the JSON record)\n", r.N, r.Lower, *r.Upper)
		}
	}
	for _, f := range fits(c, recs) {
		fmt.Fprintln(w, f)
	}
}

// writeCSV writes one row per (N, R) to path.
func writeCSV(path string, recs []record) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-csv: %w", err)
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"attn", "norm", "n", "d", "heads", "causal", "weights", "radius", "upper", "lower", "ratio",
		"upper_as_stated", "lower_median", "lower_random", "warm_start", "construction", "construction_t", "phi_inv", "inits", "steps", "lr", "seed", "engine", "seconds"})
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
			opt(r.UpperAsStated), num(r.LowerMedian), num(r.LowerRandom), strconv.FormatBool(r.WarmStart),
			num(r.Construction), num(r.ConstructionT), num(r.PhiInv), strconv.Itoa(r.Inits), strconv.Itoa(r.Steps),
			num(r.LR), strconv.FormatUint(r.Seed, 10), r.Engine, num(r.Seconds)})
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
