package main

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"lipformer/internal/plotting"
	"lipformer/train"
)

// evalRadius is the part of eval's -json output that plot -radius reads.
type evalRadius struct {
	Checkpoint string              `json:"checkpoint"`
	Split      string              `json:"split"`
	Radius     *train.RadiusReport `json:"radius"`
}

// plotRadius draws the certified fraction against the radius from each of the eval -json
// files listed in files: the per-class radius solid, K alone dashed, each named by its run
// directory and certificate.
func plotRadius(files, title, out string, stdout io.Writer) error {
	if _, err := plotting.FormatOf(out); err != nil {
		return fmt.Errorf("-out: %w", err)
	}
	chart := plotting.Chart{Title: title, XLabel: "radius R (token norm of the input embeddings)", YLabel: "fraction of bytes certified at R", LogX: true}
	if chart.Title == "" {
		chart.Title = "Top-1 bytes certified not to change within R"
	}
	n := 0
	for _, path := range strings.Split(files, ",") {
		e, err := readEvalRadius(strings.TrimSpace(path))
		if err != nil {
			return fmt.Errorf("-radius: %w", err)
		}
		points := slices.Concat(e.Radius.Points, e.Radius.Curve)
		slices.SortFunc(points, func(a, b train.RadiusPoint) int { return cmp.Compare(a.R, b.R) })
		var x, per, whole []float64
		for _, p := range points {
			x, per, whole = append(x, p.R), append(per, p.Certified), append(whole, p.CertifiedWhole)
		}
		name := fmt.Sprintf("%s (K = %.3g, %s)", filepath.Base(filepath.Dir(e.Checkpoint)), float64(e.Radius.Certificate), e.Split)
		chart.Series = append(chart.Series,
			plotting.Series{Label: name + ", per class", X: x, Y: per},
			plotting.Series{Label: name + ", from K alone", X: x, Y: whole, Dashed: true})
		n++
	}
	if err := chart.Save(out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: certified fraction against the radius of %d evaluation(s)\n", out, n)
	return nil
}

// readEvalRadius reads eval's -json output at path, which must hold radii at positive R.
func readEvalRadius(path string) (*evalRadius, error) {
	e, err := readJSON[evalRadius](path)
	if err != nil {
		return nil, err
	}
	if e.Radius == nil || len(e.Radius.Points)+len(e.Radius.Curve) == 0 {
		return nil, fmt.Errorf("%s holds no certified radii: write it with eval -radius R -radius-curve N -json", path)
	}
	return e, nil
}
