package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/schollz/progressbar/v3"

	"lipformer/internal/cli"
	"lipformer/model"
	"lipformer/train"
)

// certifiedRadii runs m over the windows of tokens again and reports the certified radii of
// its top-1 bytes at the radii asked for and along a curve of curve points, with a progress
// bar on stderr when it is a terminal.
func certifiedRadii(m *model.Model, tokens []uint8, batch, stride int, radii []float64, curve int, stderr io.Writer) (*train.RadiusReport, error) {
	b, err := m.RadiusBound()
	if err != nil {
		return nil, err
	}
	p, err := m.NewProgram(model.Sample, batch)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	var bar *progressbar.ProgressBar
	r, err := train.CertifiedRadii(p, tokens, stride, b, func(done, total int) {
		if done == 1 {
			bar = cli.Bar(stderr, total, "certified radii")
		}
		if bar != nil {
			_ = bar.Set(done)
		}
	})
	if bar != nil {
		_ = bar.Finish()
		fmt.Fprintln(stderr)
	}
	if err != nil {
		return nil, err
	}
	rep := r.Report(radii, curve)
	return &rep, nil
}

// printRadius writes the certified radii: the certificate behind them, the medians, and
// the table of certified fractions at the radii asked for.
func printRadius(w io.Writer, r *train.RadiusReport) {
	if r.Unbounded != "" {
		fmt.Fprintf(w, "certified radius: 0 at every byte: the certificate is infinite (%s)\n", r.Unbounded)
	} else {
		fmt.Fprintf(w, "certified radius in the token norm of the input embeddings (K = %.4g, without the head %.4g): median %.4g per class, %.4g from K alone\n",
			float64(r.Certificate), float64(r.Body), float64(r.MedianRadius), float64(r.MedianRadiusWhole))
	}
	fmt.Fprintf(w, "bytes' embeddings are %.4g to %.4g apart: certified whatever bytes of the window are replaced (R = %.4g): %.4f\n",
		r.NearestBytes, r.FarthestBytes, r.FarthestBytes, r.AnySubstitution.Certified)
	if len(r.Points) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "R\tcertified\tcertified and right\tcertified from K alone\t")
	for _, p := range r.Points {
		fmt.Fprintf(tw, "%.4g\t%.4f\t%.4f\t%.4f\t\n", p.R, p.Certified, p.CertifiedCorrect, p.CertifiedWhole)
	}
	tw.Flush()
}
