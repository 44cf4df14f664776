package main

import (
	"fmt"
	"math"

	"lipformer/ops"
)

// line is a least-squares fit y = a + b x with its coefficient of
// determination.
type line struct {
	a, b, r2 float64
	points   int
}

// fitLine fits y = a + b x; it needs two distinct x.
func fitLine(x, y []float64) (line, bool) {
	n := float64(len(x))
	if len(x) < 2 {
		return line{}, false
	}
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx, sy, sxx, sxy = sx+x[i], sy+y[i], sxx+x[i]*x[i], sxy+x[i]*y[i]
	}
	den := n*sxx - sx*sx
	if den <= 1e-12*n*sxx {
		return line{}, false
	}
	l := line{b: (n*sxy - sx*sy) / den, points: len(x)}
	l.a = (sy - l.b*sx) / n
	var ssRes, ssTot float64
	for i := range x {
		e := y[i] - l.a - l.b*x[i]
		d := y[i] - sy/n
		ssRes, ssTot = ssRes+e*e, ssTot+d*d
	}
	l.r2 = 1 - ssRes/ssTot
	return l, true
}

// fits describes how the lower bound grows: for L2, against W_0((N-1)/e) and
// log N - log log N for each radius (N >= 3, where log log N > 0); and, for
// each N when there are several radii, the growth exponent of the lower
// bound in R between consecutive radii (2 for quadratic growth).
func fits(c *config, recs []record) []string {
	var out []string
	for _, r := range c.radii {
		if c.kind != ops.L2 {
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
		if l, ok := fitLine(w, lower); ok {
			out = append(out, fmt.Sprintf("%s, N >= 3: lower = %.4f + %.4f W0((N-1)/e)  (R^2 %.5f, %d points)", box, l.a, l.b, l.r2, l.points))
		}
		if l, ok := fitLine(lg, lower); ok {
			out = append(out, fmt.Sprintf("%s, N >= 3: lower = %.4f + %.4f (log N - log log N)  (R^2 %.5f, %d points)", box, l.a, l.b, l.r2, l.points))
		}
	}
	if len(c.radii) < 2 {
		return out
	}
	for _, n := range c.ns {
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
