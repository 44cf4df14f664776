package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"lipformer/internal/plotting"
	"lipformer/ngram"
	"lipformer/ops"
	"lipformer/train"
)

// legendInchesPerChar is about the width of a legend character: what a chart needs to
// show a legend line of n characters whole.
const legendInchesPerChar = 0.055

// againstKeys are the x axes of plot -against: what each reads from a summary, +Inf for a
// run that has none (an unbounded model).
var againstKeys = map[string]struct {
	label string
	of    func(*train.Summary) float64
}{
	"lip_k": {"whole-model bound K (token norm of the input embeddings)", func(s *train.Summary) float64 {
		if s.Model.LipK == 0 {
			return math.Inf(1)
		}
		return s.Model.LipK
	}},
	"logit_range": {"certified logit range (2-norm of any position's logit change between two texts)", func(s *train.Summary) float64 {
		if s.Certificate == nil {
			return math.Inf(1)
		}
		return float64(s.Certificate.LogitRange)
	}},
}

// againstMetrics are the final scores plot -against draws.
var againstMetrics = map[string]struct {
	label string
	of    func(*train.Summary) train.Figure
}{
	"final_val_bpc": {"validation bpc (whole split)", func(s *train.Summary) train.Figure { return s.FinalValBPC }},
	"final_val_acc": {"next-byte accuracy (validation)", func(s *train.Summary) train.Figure { return s.FinalValAcc }},
	"test_bpc":      {"test bpc", func(s *train.Summary) train.Figure { return s.TestBPC }},
	"test_acc":      {"next-byte accuracy (test)", func(s *train.Summary) train.Figure { return s.TestAcc }},
}

// plotAgainst draws the final score metric of finished runs against key, one point per
// summary file in files (a run's summary.json or a copy): the runs of one family
// (architecture, c, embedding radius) joined in order of x on a log axis, named in that
// order in the legend, every run with
// no value of key (unbounded) a labelled horizontal line, and with a bpc metric the n-gram
// baselines of the first summary that has them.
func plotAgainst(files, key, metric, title, out string, stdout io.Writer) error {
	if _, err := plotting.FormatOf(out); err != nil {
		return fmt.Errorf("-out: %w", err)
	}
	chart, err := againstChart(files, key, metric, title)
	if err != nil {
		return err
	}
	if err := chart.Save(out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s of %d famil(ies) against %s, %d reference line(s)\n", out, metric, len(chart.Series), key, len(chart.Refs))
	return nil
}

// againstChart is the chart plotAgainst draws.
func againstChart(files, key, metric, title string) (plotting.Chart, error) {
	x, ok := againstKeys[key]
	if !ok {
		return plotting.Chart{}, fmt.Errorf("-against %q, want one of %s", key, strings.Join(slices.Sorted(maps.Keys(againstKeys)), ", "))
	}
	y, ok := againstMetrics[metric]
	if !ok {
		return plotting.Chart{}, fmt.Errorf("-against draws -metric %s, want one of %s", metric, strings.Join(slices.Sorted(maps.Keys(againstMetrics)), ", "))
	}
	chart := plotting.Chart{Title: title, XLabel: x.label, YLabel: y.label, LogX: true}
	if chart.Title == "" {
		chart.Title = y.label + " against " + key
	}
	families := map[string]*plotting.Series{}
	runs := map[string][]string{} // each family's run names, in the order of its points
	var order []string
	var baselines []ngram.Result
	for _, path := range strings.Split(files, ",") {
		path = strings.TrimSpace(path)
		s, err := readSummary(path)
		if err != nil {
			return plotting.Chart{}, fmt.Errorf("-summaries: %w", err)
		}
		v := y.of(s)
		if !v.Measured() {
			return plotting.Chart{}, fmt.Errorf("-summaries: %s has no %s", path, metric)
		}
		if baselines == nil {
			baselines = s.Baselines
		}
		xv := x.of(s)
		if math.IsInf(xv, 1) {
			chart.Refs = append(chart.Refs, plotting.Ref{Label: fmt.Sprintf("%s (no %s) %.3f", runName(path), key, float64(v)), Y: float64(v)})
			continue
		}
		fam := family(s)
		if families[fam] == nil {
			families[fam] = &plotting.Series{Label: fam, Points: true}
			order = append(order, fam)
		}
		families[fam].X = append(families[fam].X, xv)
		families[fam].Y = append(families[fam].Y, float64(v))
		runs[fam] = append(runs[fam], runName(path))
	}
	for _, fam := range order {
		s := families[fam]
		idx := make([]int, len(s.X))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(s.X[a], s.X[b]) })
		var names []string
		sorted := plotting.Series{Points: true}
		for _, i := range idx {
			sorted.X, sorted.Y = append(sorted.X, s.X[i]), append(sorted.Y, s.Y[i])
			names = append(names, runs[fam][i])
		}
		sorted.Label = s.Label + ": " + strings.Join(names, ", ")
		chart.Series = append(chart.Series, sorted)
	}
	if len(chart.Series) == 0 {
		return plotting.Chart{}, fmt.Errorf("-summaries: no run has a %s to draw against", key)
	}
	// a legend line names every run of its family: widen the chart to hold the longest
	longest := 0
	for _, sr := range chart.Series {
		longest = max(longest, len(sr.Label))
	}
	chart.Width = max(plotting.DefaultWidth, legendInchesPerChar*float64(longest)+1)
	if strings.HasSuffix(metric, "_bpc") {
		for _, b := range baselines {
			chart.Refs = append(chart.Refs, plotting.Ref{Label: fmt.Sprintf("%s (test) %.3f", ngram.Name(b.Order), b.BPC), Y: b.BPC})
		}
	}
	return chart, nil
}

// readSummary reads a summary file.
func readSummary(path string) (*train.Summary, error) { return readJSON[train.Summary](path) }

// readJSON reads the JSON file at path into a T; an error names the file.
func readJSON[T any](path string) (*T, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &v, nil
}

// runName names a summary file by its run: the directory of a summary.json, else the file
// without its extension.
func runName(path string) string {
	if filepath.Base(path) == train.SummaryFile {
		return filepath.Base(filepath.Dir(path))
	}
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

// family names the runs plot -against joins by a line: those of one architecture, c,
// mixing sub-block (or none), MLP activation and bytes per token whose embeddings start at one scale and are
// held in one ball (or none), and whose final ball norm starts at one radius.
func family(s *train.Summary) string {
	m := s.Model
	arch := m.Arch.String()
	if m.Mix > 0 {
		arch += fmt.Sprintf(" with mixing over %d bytes", m.Mix)
	}
	if m.MLPActivation() == ops.ActMaxMin {
		arch += " and MaxMin"
	}
	if m.TokenBytes > 1 {
		arch += fmt.Sprintf(", %d-byte tokens", m.TokenBytes)
	}
	name := fmt.Sprintf("%s, c = %g, embeddings std %g", arch, m.LipC, m.EffectiveEmbedStd())
	if m.EmbedRadius > 0 {
		name += fmt.Sprintf(" in a ball of radius %g", m.EmbedRadius)
	}
	if m.LipK > 0 {
		name += fmt.Sprintf(", final ball radius %g sqrt(D)", m.EffectiveBallRadius())
	}
	return name
}
