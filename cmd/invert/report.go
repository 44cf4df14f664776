package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"lipformer/flow"
	"lipformer/model"
)

// writeJSON writes one JSON object per line.
func writeJSON(w io.Writer, records []flow.Record) error {
	enc := json.NewEncoder(w)
	for _, r := range records {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// writeTable prints the setting and one line per record.
func writeTable(w io.Writer, e *experiment, records []flow.Record) {
	c := e.cfg
	fmt.Fprintf(w, "%s (step %d), %s: %d sequences of %d tokens from %s %s; float64; tol %g, at most %d iterations\n",
		e.path, e.step, e.model.Cfg.Arch, c.batch, e.model.Cfg.Context, e.corpus, c.split, c.tol, c.maxIter)
	fmt.Fprintln(w, certificateLine(e))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "input\tblock\tnorm\t||x||\tLipschitz\titerations\tfinal step\terror\trate\t\t")
	for _, r := range records {
		lip := fmt.Sprintf("%.4g", float64(r.Lipschitz))
		if !r.Certified {
			lip += " (naive)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.3g\t%s\t%d\t%.3g\t%.3g\t%.3g\t%s\t\n", r.InputName(), r.Block, r.Norm, float64(r.InputNorm), lip, r.Iterations,
			float64(r.Step), float64(r.Error), float64(r.Rate), outcome(r))
	}
	tw.Flush()
	fmt.Fprint(w, columnsLegend(c))
}

// columnsLegend explains the table's columns.
func columnsLegend(c *config) string {
	return fmt.Sprintf(`columns: input: the data windows, inverted as a whole stack (the last sub-block first, each
  from the previous inversion's result), or adversarial and random inputs of a spread, each
  sub-block alone; block: the sub-block x + g(x) inverted by x <- y - g(x); norm: the norm of
  the next columns; ||x||: the true input's norm; Lipschitz: g's constant (naive: the dp
  control's, not a certified bound); iterations: evaluations of g; final step: ||x_k - x_(k-1)||,
  the stop when <= -tol %g; error: the reconstruction error ||x_k - x|| (over -max-error %g:
  another preimage, a failure); rate: the largest ratio of successive steps, the contraction
  measured (at most a certified Lipschitz constant)
`, c.tol, c.maxError)
}

// outcome says how an inversion ended.
func outcome(r flow.Record) string {
	switch {
	case !r.Converged:
		return "NOT CONVERGED"
	case r.Failed:
		return "WRONG PREIMAGE"
	}
	return "ok"
}

// summarize prints which inversions failed and returns an error when a sub-block with a
// certified Lipschitz constant failed: that contradicts the certificate, a bug.
func summarize(w io.Writer, e *experiment, records []flow.Record) error {
	var bugs, expected []string
	for _, r := range records {
		if !r.Failed {
			continue
		}
		what := fmt.Sprintf("%s on %s (%s)", r.Block, r.InputName(), strings.ToLower(outcome(r)))
		if r.Certified {
			bugs = append(bugs, what)
		} else {
			expected = append(expected, what)
		}
	}
	arch := e.model.Cfg.Arch
	switch {
	case len(bugs) > 0:
		fmt.Fprintf(w, "FAILED: %d of %d inversions of certified sub-blocks of %s failed, a bug: %s\n", len(bugs), len(records), arch, strings.Join(bugs, "; "))
		return fmt.Errorf("%d inversions of certified sub-blocks failed", len(bugs))
	case len(expected) > 0:
		fmt.Fprintf(w, "%s: every certified sub-block inverted; %d of %d inversions of the uncertified dp attention failed, the expected finding of the negative control: %s\n",
			arch, len(expected), len(records), strings.Join(expected, "; "))
	default:
		fmt.Fprintf(w, "%s: all %d inversions converged and found their input\n", arch, len(records))
	}
	fmt.Fprintln(w, largestError(records, e.cfg.maxError))
	return nil
}

// largestError names the largest reconstruction error measured, its sub-block and input,
// beside the threshold of a failure (-max-error); a non-finite error is the largest.
func largestError(records []flow.Record, maxError float64) string {
	worst := -1
	for i, r := range records {
		e := float64(r.Error)
		if worst < 0 || !(e <= float64(records[worst].Error)) && !math.IsNaN(float64(records[worst].Error)) {
			worst = i
		}
	}
	if worst < 0 {
		return "no inversion"
	}
	r := records[worst]
	return fmt.Sprintf("largest reconstruction error: %.3g, %s on %s (a failure above -max-error %g)", float64(r.Error), r.Block, r.InputName(), maxError)
}

// certificateLine says which function is inverted and its certified constants: the
// largest sub-block factor and the product over the sub-blocks, in the token norm; with
// refined estimates, also those of the function eval scores.
func certificateLine(e *experiment) string {
	inv := fmt.Sprintf("largest certified sub-block %.4g, their product %.4g (token norm; a sub-block x + g(x) is certified 1 + Lip(g))",
		maxSubBlock(e.flow.Inverted), subBlockProduct(e.flow.Inverted))
	if e.cfg.powerIters == 0 {
		return "inverting the function eval scores (the stored power-iteration vectors): " + inv
	}
	return fmt.Sprintf("inverting the function after %d more power iterations, not quite the one eval scores: %s; as scored: largest %.4g, product %.4g",
		e.cfg.powerIters, inv, maxSubBlock(e.flow.Scored), subBlockProduct(e.flow.Scored))
}

// subBlocks are the certificate's factors of residual sub-blocks (all but lnf and head).
func subBlocks(c *model.Certificate) []model.Factor {
	return slices.DeleteFunc(slices.Clone(c.Factors), func(f model.Factor) bool { return f.Name == "lnf" || f.Name == "head" })
}

// maxSubBlock is the largest token-norm factor of a sub-block.
func maxSubBlock(c *model.Certificate) float64 {
	m := 0.0
	for _, f := range subBlocks(c) {
		m = math.Max(m, float64(f.Tok2))
	}
	return m
}

// subBlockProduct is the product of the sub-blocks' token-norm factors.
func subBlockProduct(c *model.Certificate) float64 {
	p := 1.0
	for _, f := range subBlocks(c) {
		p *= float64(f.Tok2)
	}
	return p
}
