package plotting

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// Tick spacing: at most targetTicks intervals between labels on a linear axis, at most
// maxLabelledDecades labelled powers of ten on a logarithmic one.
const (
	targetTicks        = 6
	maxLabelledDecades = 8
)

// linearTicks labels a linear axis at the multiples of a step of 1, 2 or 5 times a power
// of ten, the smallest such step that makes at most targetTicks intervals of the range
// (so 3 to 6), written as short as they can be ("250", not gonum's "250.00").
type linearTicks struct{}

// Ticks returns the labelled marks between lo and hi; none when the range is empty, not
// finite, or too narrow to label against the size of its values.
func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) || math.Max(math.Abs(lo), math.Abs(hi))/(hi-lo) > 1e12 {
		return nil
	}
	raw := (hi - lo) / targetTicks
	e := int(math.Floor(math.Log10(raw)))
	m := 10
	for _, c := range []int{1, 2, 5} {
		if float64(c)*math.Pow10(e) >= raw {
			m = c
			break
		}
	}
	step := float64(m) * math.Pow10(e)
	var ticks []plot.Tick
	for k := int(math.Ceil(lo / step)); ; k++ {
		v := decimal(k*m, e)
		if v > hi {
			break
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
	}
	return ticks
}

// logTicks marks a logarithmic axis at 1..9 times each power of ten, labelling enough of
// them to read the axis: every mark within a decade, 1, 2 and 5 within two decades, the
// powers of ten beyond that, and only some powers of ten (without the marks between)
// over more than maxLabelledDecades decades. A range too narrow for two labels gets
// linear ticks, which read well on a short logarithmic stretch.
type logTicks struct{}

// Ticks returns the marks between lo and hi, which are above zero.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return linearTicks{}.Ticks(lo, hi)
	}
	decades := math.Log10(hi / lo)
	every := max(1, int(math.Ceil(decades/maxLabelledDecades)))
	var ticks []plot.Tick
	labelled := 0
	for e := int(math.Floor(math.Log10(lo))); e <= int(math.Ceil(math.Log10(hi))); e++ {
		for m := 1; m <= 9; m++ {
			v := decimal(m, e)
			if v < lo || v > hi || (every > 1 && m > 1) {
				continue
			}
			t := plot.Tick{Value: v}
			if (m == 1 && e%every == 0) || decades <= 1 || (decades <= 2 && (m == 2 || m == 5)) {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
				labelled++
			}
			ticks = append(ticks, t)
		}
	}
	if labelled < 2 {
		return linearTicks{}.Ticks(lo, hi)
	}
	return ticks
}

// decimal returns m × 10^e as the float64 nearest the decimal, so that its label is
// "0.3" and not "0.30000000000000004"; beyond the float64 range it is +Inf or 0, which
// ParseFloat returns along with a range error.
func decimal(m, e int) float64 {
	v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", m, e), 64)
	return v
}

// LinearTicks returns the tick marker of a chart's linear axes, for figures drawn
// without Chart.
func LinearTicks() plot.Ticker { return linearTicks{} }

// LogTicks returns the tick marker of a chart's logarithmic axes, for figures drawn
// without Chart.
func LogTicks() plot.Ticker { return logTicks{} }
