package tightness

import (
	"fmt"
	"math"

	"lipformer/internal/stats"
	"lipformer/ops"
)

// Fits describes how the lower bound grows, one line of text per fit: for L2, against
// W_0((N-1)/e) and log N - log log N for each radius (N >= 3, where log log N > 0); and,
// for each N when there are several radii, the growth exponent of the lower bound in R
// between consecutive radii (2 for quadratic growth).
func Fits(c Config, recs []Record) []string {
	var out []string
	for _, r := range c.Radii {
		if c.Kind != ops.L2 {
			break
		}
		var w, lg, lower []float64
		for _, rec := range recs {
			if rec.Radius == r && rec.N >= 3 {
				w = append(w, rec.PhiInv)
				lg = append(lg, math.Log(float64(rec.N))-math.Log(math.Log(float64(rec.N))))
				lower = append(lower, rec.Lower)
			}
		}
		box := "no box"
		if r > 0 {
			box = fmt.Sprintf("R=%g", r)
		}
		if l, err := stats.FitLine(w, lower); err == nil {
			out = append(out, fmt.Sprintf("%s, N >= 3: lower = %.4f + %.4f W0((N-1)/e)  (R^2 %.5f, %d points)", box, l.A, l.B, l.R2, l.N))
		}
		if l, err := stats.FitLine(lg, lower); err == nil {
			out = append(out, fmt.Sprintf("%s, N >= 3: lower = %.4f + %.4f (log N - log log N)  (R^2 %.5f, %d points)", box, l.A, l.B, l.R2, l.N))
		}
	}
	if len(c.Radii) < 2 {
		return out
	}
	for _, n := range c.Ns {
		var rs, lower []float64
		for _, rec := range recs {
			if rec.N == n && rec.Radius > 0 && rec.Lower > 0 {
				rs = append(rs, rec.Radius)
				lower = append(lower, rec.Lower)
			}
		}
		if len(rs) < 2 {
			continue
		}
		line := fmt.Sprintf("N=%d: local exponents d log(lower) / d log R:", n)
		for k := 1; k < len(rs); k++ {
			line += fmt.Sprintf("  %g-%g: %.3f", rs[k-1], rs[k], math.Log(lower[k]/lower[k-1])/math.Log(rs[k]/rs[k-1]))
		}
		out = append(out, line)
	}
	return out
}
