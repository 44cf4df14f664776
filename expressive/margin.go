package expressive

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/gonum/mat"
)

// MarginMode says how the constructive method chooses the margin of Delta = log(1/eps) +
// margin (docs/math.md, "Expressive power of attention matrices", "The margin"). The
// margin belongs to the input, not to the fixed module, so it may depend on the target.
type MarginMode int

const (
	// MarginFixed uses Cell.Margin for every target (the zero value).
	MarginFixed MarginMode = iota
	// MarginCell uses, at each d, the one margin that realises the most targets of the
	// cell (exact: the best point of the union of the targets' margin intervals).
	MarginCell
	// MarginTarget lets each target use a margin that realises it, if there is one (exact:
	// the target succeeds when its margin interval is not empty).
	MarginTarget
)

// String returns "fixed", "cell" or "target".
func (m MarginMode) String() string {
	switch m {
	case MarginFixed:
		return "fixed"
	case MarginCell:
		return "cell"
	case MarginTarget:
		return "target"
	}
	return fmt.Sprintf("MarginMode(%d)", int(m))
}

// ParseMarginMode returns the mode named by String.
func ParseMarginMode(s string) (MarginMode, error) {
	for _, m := range []MarginMode{MarginFixed, MarginCell, MarginTarget} {
		if s == m.String() {
			return m, nil
		}
	}
	return 0, fmt.Errorf("expressive: margin mode %q, want fixed, cell or target", s)
}

// MarginLabel names the margin of a jl cell: its value when fixed, else the mode ("cell",
// "target"); "" for gd.
func (c Cell) MarginLabel() string {
	switch {
	case c.Method != MethodJL:
		return ""
	case c.Margins == MarginFixed:
		return strconv.FormatFloat(c.Margin, 'g', -1, 64)
	}
	return c.Margins.String()
}

// MarginInterval is the set [Lo, Hi] of margins m >= 0 at which a target succeeds with a
// trial set's module; Hi may be +Inf. Empty when Lo > Hi.
type MarginInterval struct {
	Lo, Hi float64
}

// Empty reports whether no margin realises the target.
func (iv MarginInterval) Empty() bool { return !(iv.Lo <= iv.Hi) }

// Contains reports whether m is in the interval.
func (iv MarginInterval) Contains(m float64) bool { return iv.Lo <= m && m <= iv.Hi }

// pick returns a margin inside a non-empty interval, away from its ends: the midpoint, or
// Lo + 1 when Hi is infinite.
func (iv MarginInterval) pick() float64 {
	if math.IsInf(iv.Hi, 1) {
		return iv.Lo + 1
	}
	return iv.Lo + (iv.Hi-iv.Lo)/2
}

// MarginInterval returns the margins m >= 0 at which the construction with the trial
// set's module realises t at precision s.Eps (s.Margin is not used): an interval, found
// exactly from the logits' linear dependence on m (see marginLines).
func (s *JLSet) MarginInterval(t *Target) (MarginInterval, error) {
	ml, err := s.lines(t)
	if err != nil {
		return MarginInterval{}, err
	}
	return ml.interval(t, s.Eps), nil
}

// marginLines holds, for one target, the logits B G G^T as a function of the margin m:
// Z(m) = A0 + m C, where A0 = B(0) G G^T and C = 1_S G G^T (1_S the support indicator),
// since B(m) = B(0) + m 1_S. // a0, c: (L, L)
type marginLines struct {
	a0, c *mat.Dense
}

// lines computes Z(m) = A0 + m C for the target t.
func (s *JLSet) lines(t *Target) (marginLines, error) {
	if err := t.Validate(); err != nil {
		return marginLines{}, err
	}
	L, _ := s.gram.Dims()
	if t.L != L {
		return marginLines{}, fmt.Errorf("expressive: target has L = %d but G has %d rows", t.L, L)
	}
	a0, c := mat.NewDense(L, L, nil), mat.NewDense(L, L, nil)
	b := make([]float64, L)
	base := -math.Log(s.Eps) // Delta at margin 0
	for i, row := range t.Rows {
		setRowLogits(b, row, base)
		ai, ci := a0.RawRowView(i), c.RawRowView(i)
		for _, e := range row {
			w := b[e.Col]
			for j, v := range s.gram.RawRowView(e.Col) {
				ai[j] += w * v
				ci[j] += v
			}
		}
	}
	return marginLines{a0: a0, c: c}, nil
}

// interval returns the margins m >= 0 at which Z(m) meets precision eps on t. Each
// condition of Precision.Success is, for a pair of entries (j, j') of a row, one linear
// inequality alpha + m beta <= tau in m: the ratio condition for j, j' in S_i
// (u_j - u_j' <= log(1 + eps) with u = z - log A) and the leak condition for j outside and
// j' in S_i (z_j - z_j' <= log eps); their intersection over all pairs and rows is an
// interval.
func (ml marginLines) interval(t *Target, eps float64) MarginInterval {
	iv := MarginInterval{Lo: 0, Hi: math.Inf(1)}
	cut := func(alpha, beta, tau float64) {
		switch {
		case beta > 0:
			iv.Hi = math.Min(iv.Hi, (tau-alpha)/beta)
		case beta < 0:
			iv.Lo = math.Max(iv.Lo, (tau-alpha)/beta)
		case alpha > tau:
			iv.Lo, iv.Hi = math.Inf(1), math.Inf(-1)
		}
	}
	logRatio, logLeak := math.Log1p(eps), math.Log(eps)
	L := t.L
	onSupport := make([]bool, L)
	for i, row := range t.Rows {
		a, c := ml.a0.RawRowView(i), ml.c.RawRowView(i)
		for _, e := range row {
			onSupport[e.Col] = true
		}
		for _, p := range row {
			up := a[p.Col] - math.Log(p.Val)
			for _, q := range row {
				if q.Col != p.Col {
					cut(up-(a[q.Col]-math.Log(q.Val)), c[p.Col]-c[q.Col], logRatio)
				}
			}
			for j := range L {
				if !onSupport[j] {
					cut(a[j]-a[p.Col], c[j]-c[p.Col], logLeak)
				}
			}
		}
		for _, e := range row {
			onSupport[e.Col] = false
		}
		if iv.Empty() {
			return iv
		}
	}
	return iv
}

// bestCommonMargin returns the margin contained in the most intervals, the number of
// them, and the maximal segment [lo, hi] of margins with that count that contains it (the
// lowest such segment; the margin is its midpoint, or lo + 1 when hi is infinite). With
// no non-empty interval it returns fallback, 0 and [fallback, fallback].
func bestCommonMargin(ivs []MarginInterval, fallback float64) (m float64, count int, seg MarginInterval) {
	type event struct {
		at    float64
		delta int // +1 opens an interval, -1 closes one
	}
	var evs []event
	for _, iv := range ivs {
		if !iv.Empty() {
			evs = append(evs, event{iv.Lo, 1}, event{iv.Hi, -1})
		}
	}
	if len(evs) == 0 {
		return fallback, 0, MarginInterval{Lo: fallback, Hi: fallback}
	}
	// Closed intervals: at equal positions, opens come before closes.
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].at != evs[j].at {
			return evs[i].at < evs[j].at
		}
		return evs[i].delta > evs[j].delta
	})
	open := 0
	for n, ev := range evs {
		open += ev.delta
		if ev.delta > 0 && open > count {
			count, seg = open, MarginInterval{Lo: ev.at, Hi: evs[n+1].at}
		}
	}
	return seg.pick(), count, seg
}

// marginReport is jl's margin at one d: the margin (fixed, or the best common one), the
// segment of margins with the same count, and the count of targets realised there.
type marginReport struct {
	margin float64
	seg    MarginInterval
	common int
}

// jlTrier returns jl's trier at width d (gg = G G^T) with each target's margin chosen by
// c.Margins, and the report of that choice. Every target is then realised by the plain
// construction at its margin (JLSet.Try), so a success is measured, not predicted. When no
// margin realises any target the common margin is DefaultMargin. // gg: (L, L)
func (c Cell) jlTrier(gg *mat.Dense, targets []*Target) (trier, marginReport, error) {
	if c.Margins == MarginFixed {
		set, err := NewJLSet(gg, c.Eps, c.Margin)
		if err != nil {
			return nil, marginReport{}, err
		}
		try := func(_ int, t *Target) (trial, error) {
			p, m, err := set.Try(t)
			return trial{prec: p, maxAbsLogit: m}, err
		}
		return try, marginReport{margin: c.Margin, seg: MarginInterval{Lo: c.Margin, Hi: c.Margin}}, nil
	}
	probe, err := NewJLSet(gg, c.Eps, 0)
	if err != nil {
		return nil, marginReport{}, err
	}
	ivs := make([]MarginInterval, len(targets))
	for n, t := range targets {
		if ivs[n], err = probe.MarginInterval(t); err != nil {
			return nil, marginReport{}, err
		}
	}
	m, count, seg := bestCommonMargin(ivs, DefaultMargin)
	margins := make([]float64, len(targets))
	for n, iv := range ivs {
		margins[n] = m
		if c.Margins == MarginTarget && !iv.Empty() {
			margins[n] = iv.pick()
		}
	}
	try := func(n int, t *Target) (trial, error) {
		set, err := NewJLSet(gg, c.Eps, margins[n])
		if err != nil {
			return trial{}, err
		}
		p, mx, err := set.Try(t)
		return trial{prec: p, maxAbsLogit: mx}, err
	}
	return try, marginReport{margin: m, seg: seg, common: count}, nil
}
