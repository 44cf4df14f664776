package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"lipformer/internal/cli"
	"lipformer/model"
)

// certify prints the Lipschitz certificate of a checkpoint, as a table or as JSON.
func certify(arg string, asJSON bool, w io.Writer) error {
	path, err := cli.CheckpointPath(arg)
	if err != nil {
		return err
	}
	m, _, err := model.Load(path)
	if err != nil {
		return err
	}
	cert, err := m.Certificate()
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(w).Encode(cert)
	}
	fmt.Fprintf(w, "%s: %s, N = %d (certified upper bounds; none for dot-product attention)\n", path, cert.Arch, cert.N)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "part\tinf-norm\t2-norm\t\tnote")
	for _, f := range cert.Factors {
		fmt.Fprintf(tw, "%s\t%s\t%s\t\t%s\n", f.Name, show(f.Inf), show(f.Two), f.Note)
	}
	fmt.Fprintf(tw, "product\t%s\t%s\t\t\n", show(cert.Inf), show(cert.Two))
	return tw.Flush()
}

// show formats a bound, "none" when infinite.
func show(b model.Bound) string {
	if math.IsInf(float64(b), 1) {
		return "none"
	}
	return fmt.Sprintf("%.4g", float64(b))
}
