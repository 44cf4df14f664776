package train

import (
	"fmt"
	"math"
	"slices"

	"lipformer/data"
	"lipformer/internal/stats"
	"lipformer/model"
)

// Radii are the certified radii of the top-1 predictions at the scored bytes of a split
// (model.RadiusBound.Radius), in the order scored, with whether each prediction is right.
type Radii struct {
	Bound    *model.RadiusBound
	PerClass []float64 // per scored byte
	Whole    []float64 // per scored byte, the whole-model form
	Correct  []bool    // the top-1 byte is the next byte
}

// CertifiedRadii runs the sampling program p over the evaluation windows of tokens that
// EvaluateScore scores (stride as there) and returns the certified radius of the top-1 byte
// at every scored byte. progress, if not nil, is called after each batch with the batches
// done and their total.
func CertifiedRadii[T data.Token](p *model.Program, tokens []T, stride int, b *model.RadiusBound, progress func(done, total int)) (*Radii, error) {
	w, err := data.NewStridedEvalWindows(tokens, p.Graph.SeqLen, stride, p.Graph.Batch)
	if err != nil {
		return nil, err
	}
	r := &Radii{Bound: b}
	for i := range w.Batches() {
		if _, err := w.Batch(i, p.Inputs, p.Targets); err != nil {
			return nil, err
		}
		if err := p.Run(); err != nil {
			return nil, fmt.Errorf("radii: batch %d: %w", i, err)
		}
		for row, target := range p.Targets {
			if target < 0 {
				continue
			}
			z, err := p.Logits(row)
			if err != nil {
				return nil, fmt.Errorf("radii: batch %d: %w", i, err)
			}
			top, perClass, whole := b.Radius(z)
			r.PerClass, r.Whole, r.Correct = append(r.PerClass, perClass), append(r.Whole, whole), append(r.Correct, top == target)
		}
		if progress != nil {
			progress(i+1, w.Batches())
		}
	}
	if len(r.PerClass) != w.Scored() {
		return nil, fmt.Errorf("radii: %d bytes, want %d", len(r.PerClass), w.Scored())
	}
	return r, nil
}

// RadiusReport summarises Radii: the certificate behind them, the median radii, and the
// fractions of the scored bytes certified at each radius asked for and along a curve.
type RadiusReport struct {
	Certificate model.Bound `json:"certificate"` // K, the whole model's token-norm constant
	Body        model.Bound `json:"body"`        // L_h, without the head
	// Unbounded names the factors without a bound when the certificate is infinite, which
	// makes every radius 0.
	Unbounded         string        `json:"unbounded,omitempty"`
	Scored            int           `json:"scored"`
	MedianRadius      Figure        `json:"median_radius"`       // of the per-class radii
	MedianRadiusWhole Figure        `json:"median_radius_whole"` // of the whole-model radii
	Points            []RadiusPoint `json:"points"`              // at the radii asked for
	// Curve is the same at radii spaced evenly in log R from the 1st to the 99th percentile
	// of the positive per-class radii; empty when none is positive.
	Curve []RadiusPoint `json:"curve,omitempty"`
	// NearestBytes and FarthestBytes are the smallest and largest distance between two
	// bytes' embeddings (model.RadiusBound).
	NearestBytes  float64 `json:"nearest_bytes"`
	FarthestBytes float64 `json:"farthest_bytes"`
	// AnySubstitution is the point at R = FarthestBytes: its certified bytes keep their
	// top-1 byte whatever bytes of their window are replaced by whatever others.
	AnySubstitution RadiusPoint `json:"any_substitution"`
}

// RadiusPoint is the fraction of the scored bytes whose top-1 byte is certified at radius
// R: its certified radius is larger than R.
type RadiusPoint struct {
	R                float64 `json:"r"`
	Certified        float64 `json:"certified"`         // by the per-class radius
	CertifiedWhole   float64 `json:"certified_whole"`   // by the whole-model radius
	CertifiedCorrect float64 `json:"certified_correct"` // certified by the per-class radius, and right
}

// Report summarises r at the radii asked for and along a curve of curve points (0: none).
func (r *Radii) Report(radii []float64, curve int) RadiusReport {
	rep := RadiusReport{Certificate: r.Bound.Whole, Body: r.Bound.Body, Unbounded: r.Bound.Why, Scored: len(r.PerClass),
		MedianRadius: Figure(medianOrNaN(r.PerClass)), MedianRadiusWhole: Figure(medianOrNaN(r.Whole)),
		NearestBytes: r.Bound.NearestBytes, FarthestBytes: r.Bound.FarthestBytes, AnySubstitution: r.at(r.Bound.FarthestBytes)}
	for _, R := range radii {
		rep.Points = append(rep.Points, r.at(R))
	}
	var positive []float64
	for _, v := range r.PerClass {
		if v > 0 && !math.IsInf(v, 1) {
			positive = append(positive, v)
		}
	}
	if curve < 1 || len(positive) == 0 {
		return rep
	}
	slices.Sort(positive)
	lo, hi := quantile(positive, 0.01), quantile(positive, 0.99)
	for i := range curve {
		R := lo
		if curve > 1 {
			R = lo * math.Pow(hi/lo, float64(i)/float64(curve-1))
		}
		rep.Curve = append(rep.Curve, r.at(R))
	}
	return rep
}

// at counts the bytes certified at radius R.
func (r *Radii) at(R float64) RadiusPoint {
	var per, whole, right int
	for i, v := range r.PerClass {
		if v > R {
			per++
			if r.Correct[i] {
				right++
			}
		}
		if r.Whole[i] > R {
			whole++
		}
	}
	n := float64(len(r.PerClass))
	return RadiusPoint{R: R, Certified: float64(per) / n, CertifiedWhole: float64(whole) / n, CertifiedCorrect: float64(right) / n}
}

// quantile is the q-quantile of the sorted xs, the element at rank floor(q (n-1)).
func quantile(sorted []float64, q float64) float64 {
	return sorted[int(q*float64(len(sorted)-1))]
}

// medianOrNaN is the median of xs, NaN (not measured) when xs is empty.
func medianOrNaN(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return stats.Median(xs)
}
