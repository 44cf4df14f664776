package main

import (
	"fmt"
	"math"
	"strings"

	"lipformer/train"
)

// metric is a quantity of the metrics log that can be plotted: a field of the training
// rows or of the evaluation rows.
type metric struct {
	name      string // value of -metric
	label     string // y-axis label
	fromTrain func(train.TrainRow) float64
	fromEval  func(train.EvalRow) float64 // set when fromTrain is nil
}

// metrics lists what -metric accepts.
func metrics() []metric {
	return []metric{
		{name: "train_bpc", label: "training loss (bits per byte)", fromTrain: train.TrainRow.BPC},
		{name: "train_loss", label: "training loss (nats per byte)", fromTrain: func(r train.TrainRow) float64 { return r.Loss }},
		{name: "val_bpc", label: "validation loss (bits per byte)", fromEval: train.EvalRow.ValBPC},
		{name: "val_loss", label: "validation loss (nats per byte)", fromEval: func(r train.EvalRow) float64 { return r.ValLoss }},
		{name: "grad_norm", label: "gradient norm before clipping", fromTrain: func(r train.TrainRow) float64 { return r.GradNorm }},
		{name: "lr", label: "learning rate", fromTrain: func(r train.TrainRow) float64 { return r.LR }},
	}
}

// metricNamed returns the metric called name, or an error listing the names.
func metricNamed(name string) (metric, error) {
	var names []string
	for _, m := range metrics() {
		if m.name == name {
			return m, nil
		}
		names = append(names, m.name)
	}
	return metric{}, fmt.Errorf("-metric %q: want one of %s", name, strings.Join(names, ", "))
}

// The x axes -x accepts, and their labels.
const (
	axisStep   = "step"
	axisTime   = "time"
	axisTokens = "tokens"
)

// axisLabel returns the label of an x axis, or an error naming the axes.
func axisLabel(axis string) (string, error) {
	switch axis {
	case axisStep:
		return "step", nil
	case axisTime:
		return "training time (s)", nil
	case axisTokens:
		return "training tokens (step × batch × context)", nil
	}
	return "", fmt.Errorf("-x %q: want %s, %s or %s", axis, axisStep, axisTime, axisTokens)
}

// query is what to extract from a run's metrics.
type query struct {
	metric        metric
	axis          string // axisStep, axisTime or axisTokens
	tokensPerStep int    // batch × context, for axisTokens
	smooth        int    // points in the moving average; 1 for none
}

// curve is the points of one run to plot.
type curve struct {
	X, Y []float64
}

// extract returns the finite values of q's metric against q's axis, in log order. With
// smoothing, each value is replaced by the mean of itself and the smooth-1 finite values
// before it (fewer at the start). Rows logged after step k are at x = k: a training row's
// loss is that of the batch of step k, before its update; an evaluation row scores the
// weights after k steps. Time is the training time of the rows, carried across resumes.
func extract(m train.Metrics, q query) curve {
	trainT, evalT := m.Times()
	var steps []int
	var times, values []float64
	keep := func(step int, t, v float64) {
		if finite(v) {
			steps, times, values = append(steps, step), append(times, t), append(values, v)
		}
	}
	if q.metric.fromTrain != nil {
		for i, r := range m.Train {
			keep(r.Step, trainT[i], q.metric.fromTrain(r))
		}
	} else {
		for i, r := range m.Eval {
			keep(r.Step, evalT[i], q.metric.fromEval(r))
		}
	}
	c := curve{X: make([]float64, len(values)), Y: movingAverage(values, q.smooth)}
	for i, step := range steps {
		switch q.axis {
		case axisTime:
			c.X[i] = times[i]
		case axisTokens:
			c.X[i] = float64(step) * float64(q.tokensPerStep)
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

// firstNonFinite returns the first step whose training loss, gradient norm or
// validation loss is not finite, or -1.
func firstNonFinite(m train.Metrics) int {
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

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
