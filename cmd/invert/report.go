package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"lipformer/flow"
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
	fmt.Fprintf(w, "%s (step %d), %s: %d sequences of %d tokens from %s %s; float64 after %d power iterations; tol %g, at most %d iterations\n",
		e.path, e.step, e.model.Cfg.Arch, c.batch, e.model.Cfg.Context, e.corpus, c.split, c.powerIters, c.tol, c.maxIter)
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
		fmt.Fprintf(w, "%s: all %d inversions converged with reconstruction errors of at most %g\n", arch, len(records), e.cfg.maxError)
	}
	return nil
}
