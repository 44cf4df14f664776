package expressive

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"lipformer/kernel"
)

// RowPrecision holds the two precision measures of docs/math.md, "Expressive power of attention matrices" for one row i with
// support S_i, in log form:
//
//	LogRatio = max_{j, j' in S_i} |log(M_ij / M_ij') - log(A_ij / A_ij')|
//	LogLeak  = max_{j not in S_i, j' in S_i} log(M_ij / M_ij')
//
// LogRatio is 0 for a single-entry row and LogLeak is -Inf for a row with no off-support
// entry. A zero attention weight on the support makes both +Inf (where defined).
type RowPrecision struct {
	LogRatio float64
	LogLeak  float64
}

// RatioErr is e^LogRatio - 1 for the row (see Precision.RatioErr).
func (r RowPrecision) RatioErr() float64 { return math.Expm1(r.LogRatio) }

// Leak is e^LogLeak for the row (see Precision.Leak).
func (r RowPrecision) Leak() float64 { return math.Exp(r.LogLeak) }

// Precision holds the per-row measures and their maxima over the rows of one matrix.
type Precision struct {
	Rows     []RowPrecision
	LogRatio float64 // max over rows of RowPrecision.LogRatio
	LogLeak  float64 // max over rows of RowPrecision.LogLeak
}

// RatioErr is e^LogRatio - 1: the largest relative error of a ratio of ratios
// (M_ij/M_ij')/(A_ij/A_ij'), taken in the direction (it or its inverse) that exceeds 1.
// RatioErr <= eps exactly when LogRatio <= log(1 + eps).
func (p Precision) RatioErr() float64 { return math.Expm1(p.LogRatio) }

// Leak is e^LogLeak: the largest ratio of an off-support weight to an on-support weight
// in the same row.
func (p Precision) Leak() float64 { return math.Exp(p.LogLeak) }

// Success reports whether both conditions of docs/math.md, "Expressive power of attention matrices" hold at precision eps:
// LogRatio <= log(1 + eps) and LogLeak <= log(eps).
func (p Precision) Success(eps float64) bool {
	return p.LogRatio <= math.Log1p(eps) && p.LogLeak <= math.Log(eps)
}

// MeasureLogits computes the precision of the attention matrix softmax_rows(z) against t
// directly from the logits z (or from log-attention weights: both measures are invariant
// to adding a constant to a row), which avoids the underflow of tiny weights. Rows are
// measured in parallel (gd measures its L x L logits at every step). // z: (L, L)
func MeasureLogits(z *mat.Dense, t *Target) (Precision, error) {
	if err := checkSquare(z, t, "logits"); err != nil {
		return Precision{}, err
	}
	p := newPrecision(t.L)
	finite := make([]bool, t.L)
	kernel.ParallelFor(t.L, t.L, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			row := z.RawRowView(i)
			finite[i] = true
			for _, v := range row {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					finite[i] = false
					break
				}
			}
			if finite[i] {
				p.Rows[i] = measureRow(row, t.Rows[i])
			}
		}
	})
	for i, ok := range finite {
		if !ok {
			return Precision{}, fmt.Errorf("expressive: logits row %d is not finite", i)
		}
		p.setRow(i, p.Rows[i])
	}
	return p, nil
}

// Measure computes the precision of an attention matrix m against t from its weights.
// Rows need not be normalised; entries must be finite and nonnegative. // m: (L, L)
func Measure(m *mat.Dense, t *Target) (Precision, error) {
	if err := checkSquare(m, t, "attention matrix"); err != nil {
		return Precision{}, err
	}
	p := newPrecision(t.L)
	logs := make([]float64, t.L)
	for i := range t.L {
		for j, v := range m.RawRowView(i) {
			if !(v >= 0) || math.IsInf(v, 1) {
				return Precision{}, fmt.Errorf("expressive: attention entry (%d, %d) = %v, want finite and >= 0", i, j, v)
			}
			logs[j] = math.Log(v)
		}
		p.setRow(i, measureRow(logs, t.Rows[i]))
	}
	return p, nil
}

// checkSquare validates t and checks that the matrix named what is L x L.
func checkSquare(x *mat.Dense, t *Target, what string) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if x == nil {
		return fmt.Errorf("expressive: %s is nil", what)
	}
	if r, c := x.Dims(); r != t.L || c != t.L {
		return fmt.Errorf("expressive: %s is %d x %d, want %d x %d (the target's L)", what, r, c, t.L, t.L)
	}
	return nil
}

func newPrecision(L int) Precision {
	return Precision{Rows: make([]RowPrecision, L), LogRatio: math.Inf(-1), LogLeak: math.Inf(-1)}
}

func (p *Precision) setRow(i int, r RowPrecision) {
	p.Rows[i] = r
	p.LogRatio = math.Max(p.LogRatio, r.LogRatio)
	p.LogLeak = math.Max(p.LogLeak, r.LogLeak)
}

// measureRow computes the measures of one row from its log-weights lz (up to a constant;
// -Inf for a zero weight) and its support.
func measureRow(lz []float64, support []Entry) RowPrecision {
	// The ratio error is the spread of u_j = lz_j - log A_j over the support.
	uMax, uMin := math.Inf(-1), math.Inf(1)
	onMin := math.Inf(1)
	for _, e := range support {
		u := lz[e.Col] - math.Log(e.Val)
		uMax, uMin = math.Max(uMax, u), math.Min(uMin, u)
		onMin = math.Min(onMin, lz[e.Col])
	}
	var r RowPrecision
	switch {
	case len(support) < 2:
		r.LogRatio = 0
	case math.IsInf(onMin, -1):
		r.LogRatio = math.Inf(1)
	default:
		r.LogRatio = uMax - uMin
	}
	offMax := math.Inf(-1)
	next := 0
	for j, v := range lz {
		if next < len(support) && support[next].Col == j {
			next++
			continue
		}
		offMax = max(offMax, v) // the builtin: math.Max's semantics, inlined
	}
	switch {
	case len(support) == len(lz):
		r.LogLeak = math.Inf(-1)
	case math.IsInf(onMin, -1):
		r.LogLeak = math.Inf(1)
	default:
		r.LogLeak = offMax - onMin
	}
	return r
}
