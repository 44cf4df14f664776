package train

import (
	"fmt"
	"strings"
)

// Quantity is a quantity of the metrics log that can be plotted: a field of the training
// rows or of the evaluation rows.
type Quantity struct {
	Name      string // what cmd/plot -metric takes
	Label     string // y-axis label
	FromTrain func(TrainRow) float64
	FromEval  func(EvalRow) float64 // set when FromTrain is nil
}

// Quantities lists the quantities of a metrics log that can be plotted.
func Quantities() []Quantity {
	return []Quantity{
		{Name: "train_bpc", Label: "training loss (bits per byte)", FromTrain: TrainRow.BPC},
		{Name: "train_loss", Label: "training loss (nats per byte)", FromTrain: func(r TrainRow) float64 { return r.Loss }},
		{Name: "val_bpc", Label: "validation loss (bits per byte)", FromEval: EvalRow.ValBPC},
		{Name: "val_loss", Label: "validation loss (nats per byte)", FromEval: func(r EvalRow) float64 { return r.ValLoss }},
		{Name: "grad_norm", Label: "gradient norm before clipping", FromTrain: func(r TrainRow) float64 { return r.GradNorm }},
		{Name: "lr", Label: "learning rate", FromTrain: func(r TrainRow) float64 { return r.LR }},
	}
}

// QuantityNamed returns the quantity called name, or an error listing the names.
func QuantityNamed(name string) (Quantity, error) {
	var names []string
	for _, q := range Quantities() {
		if q.Name == name {
			return q, nil
		}
		names = append(names, q.Name)
	}
	return Quantity{}, fmt.Errorf("%q: want one of %s", name, strings.Join(names, ", "))
}

// The x axes of a Curve.
const (
	AxisStep   = "step"
	AxisTime   = "time"   // training time, across resumes (Metrics.Times)
	AxisTokens = "tokens" // step × batch × context
)

// AxisLabel returns the label of an x axis, or an error naming the axes.
func AxisLabel(axis string) (string, error) {
	switch axis {
	case AxisStep:
		return "step", nil
	case AxisTime:
		return "training time (s)", nil
	case AxisTokens:
		return "training tokens (step × batch × context)", nil
	}
	return "", fmt.Errorf("%q: want %s, %s or %s", axis, AxisStep, AxisTime, AxisTokens)
}

// Query is what to extract from a run's metrics.
type Query struct {
	Quantity      Quantity
	Axis          string // AxisStep, AxisTime or AxisTokens
	TokensPerStep int    // batch × context, for AxisTokens
	Smooth        int    // points in the moving average; 1 for none
}

// Curve is the points of one run to plot.
type Curve struct {
	X, Y []float64
}

// Curve returns the finite values of q's quantity against q's axis, in log order. With
// smoothing, each value is replaced by the mean of itself and the smooth-1 finite values
// before it (fewer at the start). Rows logged after step k are at x = k: a training row's
// loss is that of the batch of step k, before its update; an evaluation row scores the
// weights after k steps. Time is the training time of the rows, carried across resumes.
func (m Metrics) Curve(q Query) Curve {
	trainT, evalT := m.Times()
	var steps []int
	var times, values []float64
	keep := func(step int, t, v float64) {
		if finite(v) {
			steps, times, values = append(steps, step), append(times, t), append(values, v)
		}
	}
	if q.Quantity.FromTrain != nil {
		for i, r := range m.Train {
			keep(r.Step, trainT[i], q.Quantity.FromTrain(r))
		}
	} else {
		for i, r := range m.Eval {
			keep(r.Step, evalT[i], q.Quantity.FromEval(r))
		}
	}
	c := Curve{X: make([]float64, len(values)), Y: movingAverage(values, q.Smooth)}
	for i, step := range steps {
		switch q.Axis {
		case AxisTime:
			c.X[i] = times[i]
		case AxisTokens:
			c.X[i] = float64(step) * float64(q.TokensPerStep)
		default:
			c.X[i] = float64(step)
		}
	}
	return c
}

// movingAverage returns the trailing mean of each value over a window of n (n >= 1). Each
// window is summed afresh: a running sum would carry the rounding error of a huge value
// (a diverging gradient norm) into the small ones after it.
func movingAverage(v []float64, n int) []float64 {
	out := make([]float64, len(v))
	for i := range v {
		w := v[max(0, i-n+1) : i+1]
		sum := 0.0
		for _, x := range w {
			sum += x
		}
		out[i] = sum / float64(len(w))
	}
	return out
}

// FirstNonFinite returns the first step whose training loss, gradient norm or
// validation loss is not finite, or -1.
func (m Metrics) FirstNonFinite() int {
	first := -1
	note := func(step int, vs ...float64) {
		for _, v := range vs {
			if !finite(v) && (first < 0 || step < first) {
				first = step
			}
		}
	}
	for _, r := range m.Train {
		note(r.Step, r.Loss, r.GradNorm)
	}
	for _, r := range m.Eval {
		note(r.Step, r.ValLoss)
	}
	return first
}
