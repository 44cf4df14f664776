package plotting

import (
	"math"
	"testing"
)

// curve is a training curve from 6 down to 2 over steps 0..100: its first point far
// above the rest, 3.2 at step 10 (the first tenth), 2 at the end.
func curve() Series {
	x := []float64{0, 5, 10, 20, 40, 60, 80, 100}
	y := []float64{6, 4, 3.2, 2.8, 2.5, 2.3, 2.1, 2}
	return Series{Label: "run", X: x, Y: y}
}

// TestFitYRange: with FitY the y range runs from the runs' lowest point to their highest
// past the first tenth of the steps, padded; a baseline close above widens it, one far
// above is left out of the plot but kept in the legend; without FitY the first point
// sets the top.
func TestFitYRange(t *testing.T) {
	c := Chart{Series: []Series{curve()}, Refs: []Ref{{"near", 3.4}, {"far", 3.8}, {"below", 0.5}}, FitY: true}
	lo, hi, off, ok := c.fitRange()
	// from 2 to 3.4 (3.2 past the first tenth, widened to the near baseline), padded by 4%
	span := 3.4 - 2.0
	if !ok || math.Abs(lo-(2-yPad*span)) > 1e-12 || math.Abs(hi-(3.4+yPad*span)) > 1e-12 {
		t.Errorf("range [%v, %v], want [%v, %v]", lo, hi, 2-yPad*span, 3.4+yPad*span)
	}
	if len(off) != 3 || off[0] != 0 || off[1] != 1 || off[2] != -1 {
		t.Errorf("off %v, want [0 1 -1]: near drawn, far above, below under the range", off)
	}
	p, _, err := c.build()
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Min != lo || p.Y.Max != hi {
		t.Errorf("plot's y axis [%v, %v], want the fitted [%v, %v]", p.Y.Min, p.Y.Max, lo, hi)
	}
	c.FitY = false
	if p, _, err = c.build(); err != nil || p.Y.Max < 6 {
		t.Errorf("without FitY: y max %v (error %v), want the first point's 6 inside", p.Y.Max, err)
	}
}

// TestFitYLog: on a logarithmic axis the padding is a ratio and the range stays above 0.
func TestFitYLog(t *testing.T) {
	c := Chart{Series: []Series{{X: []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Y: []float64{100, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.01}}}, LogY: true, FitY: true}
	lo, hi, _, ok := c.fitRange()
	f := math.Pow(100, yPad)
	if !ok || math.Abs(lo-0.01/f) > 1e-12 || math.Abs(hi-f) > 1e-12 {
		t.Errorf("range [%v, %v], want [%v, %v]", lo, hi, 0.01/f, f)
	}
}
