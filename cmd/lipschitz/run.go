package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"lipformer/internal/cli"
	"lipformer/lipschitz/search"
	"lipformer/lipschitz/tightness"
	"lipformer/model"
)

// run parses args, runs every (N, R) and writes the table, JSON, CSV and plot; with
// -ckpt it prints the certificate instead.
func run(args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if c.ckpt != "" {
		return certify(c.ckpt, c.searchN, c.whole, c.exp.Search, c.json, stdout, stderr)
	}
	human := stdout
	if c.json {
		human = stderr
	}
	recs, err := records(c, stdout, stderr)
	if err != nil {
		return err
	}
	shapes := map[tightness.Shape]bool{}
	for _, r := range recs {
		shapes[tightness.Shape{Dim: r.D, Heads: r.Heads}] = true
	}
	if len(shapes) > 1 {
		tightness.WriteShapeTable(human, recs)
	} else {
		tightness.WriteTable(human, c.exp, recs)
	}
	if c.csvPath != "" {
		if err := writeCSV(c.csvPath, recs); err != nil {
			return fmt.Errorf("-csv: %w", err)
		}
	}
	if c.plotPath != "" {
		save := func() error { return tightness.SavePlot(c.plotPath, c.exp, recs) }
		if len(shapes) > 1 {
			save = func() error { return tightness.SaveShapePlot(c.plotPath, recs) }
		}
		if err := save(); err != nil {
			return fmt.Errorf("-plot: %w", err)
		}
	}
	return nil
}

// records runs every shape of c, streaming JSON records to stdout with -json, or with
// -records reads them from that file.
func records(c *config, stdout, stderr io.Writer) ([]tightness.Record, error) {
	if c.records != "" {
		f, err := os.Open(c.records)
		if err != nil {
			return nil, fmt.Errorf("-records: %w", err)
		}
		defer f.Close()
		recs, err := tightness.ReadRecords(f)
		if err != nil {
			return nil, fmt.Errorf("-records: %w", err)
		}
		return recs, nil
	}
	var p tightness.Progress
	bar := cli.Bar(stderr, len(c.shapes)*len(c.exp.Ns)*len(c.exp.Radii)*c.exp.Search.Starts, "starts")
	if bar != nil {
		p.Cell = func(n int, r float64) { bar.Describe(fmt.Sprintf("N=%d R=%g", n, r)) }
		p.Start = func() { _ = bar.Add(1) }
	}
	if c.json {
		p.Record = func(r tightness.Record) error { return json.NewEncoder(stdout).Encode(r) }
	}
	recs, err := tightness.RunShapes(c.exp, c.shapes, p)
	if err != nil {
		return nil, err
	}
	if bar != nil {
		_ = bar.Finish()
		fmt.Fprintln(stderr)
	}
	return recs, nil
}

// writeCSV writes the records as CSV to a new file at path.
func writeCSV(path string, recs []tightness.Record) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := tightness.WriteCSV(f, recs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// certify prints the Lipschitz certificate of the checkpoint arg names, as tables or as
// JSON; with searchN > 0 it also searches each tied L2 attention layer for lower bounds
// on sequences of searchN tokens (o's starts and steps), and with whole > 0 the whole model
// on that many windows, with the progress of the starts and of the Jacobian blocks on
// stderr: a bar on a terminal, a line every 10 s otherwise.
func certify(arg string, searchN, whole int, o search.Options, asJSON bool, w, stderr io.Writer) error {
	path, err := cli.CheckpointPath(arg)
	if err != nil {
		return err
	}
	m, _, err := model.Load(path)
	if err != nil {
		return err
	}
	r := cli.Reporter(stderr, cli.Logger(stderr))
	progress := r.Task("searching", "lower bounds of the certificate", "starts")
	wholeProgress := r.Task("searching", "the whole model's Jacobian blocks", "blocks")
	cert, err := tightness.Certify(m, searchN, o, whole, progress, wholeProgress)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(w).Encode(cert)
	}
	return cert.WriteTable(w, path)
}
