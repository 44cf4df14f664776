package plotting

import (
	"math"
	"slices"
)

// Constants of Chart.FitY: the first fitSkip of each series' x span is left out of the
// top of the y range (the start of a training curve, far above the rest); a reference
// line within refReach of the range's span beyond it widens the range to show it; the
// range is padded by yPad of its span on each side.
const (
	fitSkip  = 0.1
	refReach = 0.25
	yPad     = 0.04
)

// fitRange is the y range Chart.FitY gives: from the lowest drawable point of any series
// to the highest point of any series past the first tenth of its x span, widened to the
// reference lines within reach. off holds, for each of c.Refs, 0 for a line inside the
// range, +1 for one left out above it and -1 below. ok is false when no series has a
// drawable point.
func (c Chart) fitRange() (lo, hi float64, off []int, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		var xs, ys []float64
		for i := range s.X {
			if c.drawable(s.X[i], s.Y[i]) {
				xs, ys = append(xs, s.X[i]), append(ys, s.Y[i])
			}
		}
		if len(xs) == 0 {
			continue
		}
		lo = math.Min(lo, slices.Min(ys))
		x0, x1 := slices.Min(xs), slices.Max(xs)
		cut := x0 + fitSkip*(x1-x0)
		top := math.Inf(-1)
		for i, x := range xs {
			if x >= cut {
				top = math.Max(top, ys[i])
			}
		}
		hi = math.Max(hi, top)
	}
	if math.IsInf(lo, 1) {
		return 0, 0, nil, false
	}
	span := c.span(lo, hi)
	off = make([]int, len(c.Refs))
	for i, r := range c.Refs {
		switch {
		case r.Y > hi && c.span(hi, r.Y) > refReach*span:
			off[i] = 1
		case r.Y < lo && c.span(r.Y, lo) > refReach*span:
			off[i] = -1
		}
	}
	for i, r := range c.Refs {
		if off[i] == 0 && c.drawable(0, r.Y) {
			lo, hi = math.Min(lo, r.Y), math.Max(hi, r.Y)
		}
	}
	lo, hi = c.pad(lo, hi)
	return lo, hi, off, true
}

// span is the length of [lo, hi] on the y axis's scale: a ratio's logarithm on a
// logarithmic axis.
func (c Chart) span(lo, hi float64) float64 {
	if c.LogY {
		return math.Log(hi / lo)
	}
	return hi - lo
}

// pad widens [lo, hi] by yPad of its span on each side (on the axis's scale), or around a
// single value by a tenth of it.
func (c Chart) pad(lo, hi float64) (float64, float64) {
	if c.LogY {
		f := math.Pow(hi/lo, yPad)
		if lo == hi {
			f = 1.1
		}
		return lo / f, hi * f
	}
	d := yPad * (hi - lo)
	if lo == hi {
		d = math.Max(math.Abs(lo)/10, 1e-9)
	}
	return lo - d, hi + d
}
