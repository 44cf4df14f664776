// Command plot draws training curves of one or more runs, read from their metrics.jsonl,
// to a PNG, SVG or PDF file (by the extension of -out). Legends name each run (its
// directory) and the settings in which the runs differ (from summary.json or the
// checkpoint's metadata); a run that reached a non-finite loss or gradient is drawn up to
// that point, ends with a cross and is marked diverged in the legend. The y range fits the
// runs (plotting.Chart.FitY): the first tenth of the steps may rise above it. Curves of
// bits per byte show the n-gram baselines stored in the runs' summaries unless
// -baselines=false. A run with fewer than 5 points of the metric is warned about.
//
//	go run ./cmd/plot -runs out/dp,out/l2 -metric val_bpc -out val.png
//	go run ./cmd/plot -runs 'out/sweep/*-L12-*' -metric train_bpc -smooth 20 -x tokens -out train.svg
//	go run ./cmd/plot -runs out/sweep/dp-L12-pre-s1 -metric grad_norm -logy -out grad.png
//
// With -radius it instead draws, from the JSON that eval -radius -radius-curve -json
// writes, the fraction of the scored bytes certified at radius R against R.
//
//	go run ./cmd/plot -radius k10.json,k100.json -out radius.png
//
// With -logit-ball it draws, from the JSON that eval -json writes for models bounded end to
// end (and with -logit-radius), bits per byte against the logit radius: each model at its
// certified radius, the floor and the bounded count models (docs/math.md, "What a logit
// ball allows"). Files joined by "+" are one series, a line through their radii.
//
//	go run ./cmd/plot -logit-ball k2.json+k10.json+k100.json,dp.json -out ball.png
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"lipformer/internal/cli"
	"lipformer/internal/plotting"
	"lipformer/train"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "plot:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var names []string
	for _, q := range train.Quantities() {
		names = append(names, q.Name)
	}
	runsFlag := fs.String("runs", "", "comma-separated run directories (shell patterns such as out/sweep/dp-* are expanded)")
	metricName := fs.String("metric", "train_bpc", "what to plot: "+strings.Join(names, ", "))
	axis := fs.String("x", train.AxisStep, "x axis: step, time (training seconds) or tokens (step × batch × context)")
	smooth := fs.Int("smooth", 1, "moving average over this many points (training metrics only; 1: none)")
	logY := fs.Bool("logy", false, "logarithmic y axis")
	out := fs.String("out", "curves.png", "output file; its extension picks the format: "+strings.Join(plotting.Formats(), ", "))
	title := fs.String("title", "", "chart title (default: the metric)")
	baselines := fs.Bool("baselines", true, "with a bpc metric, draw the byte n-gram baselines (test split bpc) of the first run whose summary has them as horizontal lines (-baselines=false: none)")
	against := fs.String("against", "", "instead of curves: draw -metric (final_val_bpc, final_val_acc, test_bpc, test_acc) of the finished runs in -summaries against lip_k or logit_range, on a log axis")
	summaries := fs.String("summaries", "", "with -against: comma-separated summary files (a run's summary.json or a copy)")
	radius := fs.String("radius", "", "instead of runs: comma-separated files of eval -radius -radius-curve -json output; draw the certified fraction against the radius")
	logitBall := fs.String("logit-ball", "", "instead of runs: comma-separated files of eval -json output of one split, written with -logit-radius (or of models bounded end to end), files joined by + one series; draw bpc against the logit radius: the models at their certified radii, the floor and the bounded count models, unbounded models and n-gram baselines as lines")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *logitBall != "" {
		if *runsFlag != "" || *radius != "" || *against != "" {
			return fmt.Errorf("-logit-ball draws eval's output; -runs, -radius and -against are other plots: give one")
		}
		return plotLogitBall(*logitBall, *title, *out, stdout)
	}
	if *against != "" {
		if *runsFlag != "" || *radius != "" {
			return fmt.Errorf("-against draws -summaries; -runs and -radius are other plots: give one")
		}
		return plotAgainst(*summaries, *against, *metricName, *title, *out, stdout)
	}
	if *radius != "" {
		if *runsFlag != "" {
			return fmt.Errorf("-radius draws eval's output, -runs training curves: give one")
		}
		return plotRadius(*radius, *title, *out, stdout)
	}
	q, xLabel, err := parseQuery(*metricName, *axis, *smooth)
	if err != nil {
		return err
	}
	if _, err := plotting.FormatOf(*out); err != nil {
		return fmt.Errorf("-out: %w", err)
	}
	dirs, err := runDirs(*runsFlag)
	if err != nil {
		return err
	}
	runs := make([]*runInfo, len(dirs))
	for i, dir := range dirs {
		if runs[i], err = loadRun(dir); err != nil {
			return fmt.Errorf("-runs: %w", err)
		}
	}
	chart := plotting.Chart{Title: *title, XLabel: xLabel, YLabel: q.Quantity.Label, LogY: *logY, FitY: true}
	if chart.Title == "" {
		chart.Title = defaultTitle(q)
	}
	for i, label := range legends(runs) {
		if q.Axis == train.AxisTokens {
			if q.TokensPerStep, err = runs[i].tokensPerStep(); err != nil {
				return err
			}
		}
		c := runs[i].metrics.Curve(q)
		diverged := runs[i].metrics.FirstNonFinite() >= 0 || runs[i].nonFinite
		chart.Series = append(chart.Series, plotting.Series{Label: label, X: c.X, Y: c.Y, MarkLast: diverged})
		if n := finitePoints(c.Y); n < minPoints {
			fmt.Fprintf(stderr, "plot: warning: %s has %d point(s) of %s, too few for a curve (%d or more: train longer, or validate more often with -eval-every)\n", runs[i].dir, n, q.Quantity.Name, minPoints)
		}
	}
	if chart.Refs, err = refs(runs, q, *baselines, given(fs, "baselines"), stderr); err != nil {
		return err
	}
	if err := chart.Save(*out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s of %d run(s)\n", *out, q.Quantity.Name, len(runs))
	return nil
}

// minPoints is the fewest points of a run's curve plot draws without a warning.
const minPoints = 5

// refs returns the reference lines: with a bpc metric and draw, the n-gram baselines of
// the first run whose summary has them (baselineRefs). When none has them, given (the
// -baselines flag on the command line) makes it an error, and otherwise a note on stderr;
// -baselines given for another metric is an error.
func refs(runs []*runInfo, q train.Query, draw, given bool, stderr io.Writer) ([]plotting.Ref, error) {
	bpc := strings.HasSuffix(q.Quantity.Name, "_bpc")
	switch {
	case !draw:
		return nil, nil
	case !bpc && given:
		return nil, fmt.Errorf("-baselines: the n-gram baselines are in bits per byte, and -metric %s is not", q.Quantity.Name)
	case !bpc:
		return nil, nil
	}
	r, err := baselineRefs(runs)
	if err != nil && !given {
		fmt.Fprintln(stderr, "plot: no run's summary.json has n-gram baselines: none drawn")
		return nil, nil
	}
	return r, err
}

// given reports whether the flag name was set on the command line.
func given(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// finitePoints counts the finite values of ys.
func finitePoints(ys []float64) int {
	n := 0
	for _, y := range ys {
		if !math.IsNaN(y) && !math.IsInf(y, 0) {
			n++
		}
	}
	return n
}

// parseQuery checks -metric, -x and -smooth, and returns the query with the label of its
// x axis.
func parseQuery(metricName, axis string, smooth int) (train.Query, string, error) {
	m, err := train.QuantityNamed(metricName)
	if err != nil {
		return train.Query{}, "", fmt.Errorf("-metric %w", err)
	}
	xLabel, err := train.AxisLabel(axis)
	if err != nil {
		return train.Query{}, "", fmt.Errorf("-x %w", err)
	}
	switch {
	case smooth < 1:
		return train.Query{}, "", fmt.Errorf("-smooth %d: want at least 1 (1: no smoothing)", smooth)
	case smooth > 1 && m.FromTrain == nil:
		return train.Query{}, "", fmt.Errorf("-smooth %d: smoothing applies to the training metrics, not %s", smooth, m.Name)
	}
	return train.Query{Quantity: m, Axis: axis, Smooth: smooth}, xLabel, nil
}

// runDirs splits -runs and expands the entries that are patterns, keeping the order given.
func runDirs(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, fmt.Errorf("-runs is required: comma-separated run directories")
	}
	var dirs []string
	for _, entry := range strings.Split(list, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			return nil, fmt.Errorf("-runs %q: empty entry", list)
		}
		if !strings.ContainsAny(entry, "*?[") {
			dirs = append(dirs, entry)
			continue
		}
		matches, err := filepath.Glob(entry)
		if err != nil {
			return nil, fmt.Errorf("-runs %q: %w", entry, err)
		}
		var runs []string
		for _, m := range matches {
			if st, err := os.Stat(filepath.Join(m, train.MetricsFile)); err == nil && !st.IsDir() {
				runs = append(runs, m)
			}
		}
		if len(runs) == 0 {
			return nil, fmt.Errorf("-runs %q: no run directory (with a metrics.jsonl) matches", entry)
		}
		dirs = append(dirs, runs...)
	}
	return dirs, nil
}

// defaultTitle names the metric and the smoothing.
func defaultTitle(q train.Query) string {
	if q.Smooth > 1 {
		return fmt.Sprintf("%s, moving average of %d steps", q.Quantity.Label, q.Smooth)
	}
	return q.Quantity.Label
}
