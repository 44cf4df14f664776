package main

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"lipformer/internal/plotting"
	"lipformer/ngram"
)

// evalBall is the part of eval's -json output that plot -logit-ball reads.
type evalBall struct {
	Checkpoint string         `json:"checkpoint"`
	Split      string         `json:"split"`
	BPC        float64        `json:"bpc"`
	Baselines  []ngram.Result `json:"baselines"`
	LogitBall  []struct {
		Radius    float64        `json:"radius"`
		Certified bool           `json:"certified"`
		FloorBPC  float64        `json:"floor_bpc"`
		Bounded   []ngram.Result `json:"bounded"`
	} `json:"logit_ball"`
}

// plotLogitBall draws bpc against the logit radius from the eval -json files listed in
// files (comma-separated), all of one split: each model bounded end to end a point at its
// certified radius, named by its run; models whose files are joined by "+" one series, a
// line through their points in the order of their radii, named by their runs; the floor
// and the bounded count models of every radius the files hold, joined over the radii; a
// model with no certified radius, and the n-gram baselines of the first file that has
// them, as horizontal lines.
func plotLogitBall(files, title, out string, stdout io.Writer) error {
	if _, err := plotting.FormatOf(out); err != nil {
		return fmt.Errorf("-out: %w", err)
	}
	chart := plotting.Chart{Title: title, XLabel: "logit radius rho (every text's logits at a position within rho of one point)", YLabel: "bits per byte", LogX: true}
	type point struct{ x, y float64 }
	curves := map[string][]point{}
	var names []string // of curves, in the order met
	add := func(name string, x, y float64) {
		if _, ok := curves[name]; !ok {
			names = append(names, name)
		}
		curves[name] = append(curves[name], point{x, y})
	}
	var split string
	var baselines []ngram.Result
	var models []plotting.Series // drawn after the curves
	for _, entry := range strings.Split(files, ",") {
		type model struct {
			at    point
			label string // run and score
		}
		var group []model // the certified models of entry
		for _, path := range strings.Split(entry, "+") {
			path = strings.TrimSpace(path)
			e, err := readEvalBall(path)
			if err != nil {
				return fmt.Errorf("-logit-ball: %w", err)
			}
			if split == "" {
				split = e.Split
			} else if e.Split != split {
				return fmt.Errorf("-logit-ball: %s scores the %s split, the files before it %s", path, e.Split, split)
			}
			if baselines == nil {
				baselines = e.Baselines
			}
			run := filepath.Base(filepath.Dir(e.Checkpoint))
			certified := false
			for _, b := range e.LogitBall {
				add("floor: no model with logits in the ball scores below", b.Radius, b.FloorBPC)
				for _, r := range b.Bounded {
					add("bounded "+ngram.Name(r.Order)+" (count model, logits in the ball)", b.Radius, r.BPC)
				}
				if b.Certified {
					certified = true
					group = append(group, model{point{b.Radius, e.BPC}, fmt.Sprintf("%s %.3f", run, e.BPC)})
				}
			}
			if !certified {
				if strings.Contains(entry, "+") {
					return fmt.Errorf("-logit-ball: %s has no certified radius, so it cannot be a point of the series %s", path, entry)
				}
				chart.Refs = append(chart.Refs, plotting.Ref{Label: fmt.Sprintf("%s (no certified radius) %.3f", run, e.BPC), Y: e.BPC})
			}
		}
		slices.SortStableFunc(group, func(a, b model) int { return cmp.Compare(a.at.x, b.at.x) })
		if len(group) > 0 {
			s := plotting.Series{Points: true}
			var labels []string
			for _, m := range group {
				s.X, s.Y = append(s.X, m.at.x), append(s.Y, m.at.y)
				labels = append(labels, m.label)
			}
			s.Label = strings.Join(labels, ", ")
			models = append(models, s)
		}
	}
	for _, name := range names {
		ps := curves[name]
		slices.SortFunc(ps, func(a, b point) int { return cmp.Compare(a.x, b.x) })
		ps = slices.CompactFunc(ps, func(a, b point) bool { return a.x == b.x })
		s := plotting.Series{Label: name, Dashed: true}
		for _, p := range ps {
			s.X, s.Y = append(s.X, p.x), append(s.Y, p.y)
		}
		chart.Series = append(chart.Series, s)
	}
	chart.Series = append(chart.Series, models...)
	if len(names) == 0 {
		return fmt.Errorf("-logit-ball: no file holds a logit radius: write them with eval -ckpt RUN -logit-radius R,... -json")
	}
	for _, b := range baselines {
		chart.Refs = append(chart.Refs, plotting.Ref{Label: fmt.Sprintf("%s (Kneser-Ney) %.3f", ngram.Name(b.Order), b.BPC), Y: b.BPC})
	}
	if chart.Title == "" {
		chart.Title = "What a logit radius allows (" + split + " split)"
	}
	if err := chart.Save(out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: bpc against the logit radius, %d series, %d reference line(s)\n", out, len(chart.Series), len(chart.Refs))
	return nil
}

// readEvalBall reads eval's -json output at path.
func readEvalBall(path string) (*evalBall, error) {
	e, err := readJSON[evalBall](path)
	if err != nil {
		return nil, err
	}
	if e.Checkpoint == "" {
		return nil, fmt.Errorf("%s is not eval -json output (no checkpoint)", path)
	}
	return e, nil
}
