// Package runtest makes the tiny training runs that the tests of the programs reading run
// directories (eval, sample, invert, lipschitz, bench) start from.
package runtest

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"lipformer/data"
	"lipformer/model"
	"lipformer/train"
)

// TextFile writes text into a file of a temporary directory and returns its path.
func TextFile(t testing.TB, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Train trains a model of cfg, its vocabulary the corpus's and its weights from seed 1, on
// the corpus spec (a file or a corpus name, loaded with o) with the options opt, their
// Data set to spec, into the run directory out, logging nowhere; it returns out.
func Train(t testing.TB, spec string, o data.Options, cfg model.Config, opt train.Options, out string) string {
	t.Helper()
	c, err := data.Load(context.Background(), spec, o)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Vocab = c.Vocab.Size()
	m, err := model.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	opt.Data = spec
	r := &train.Run{Model: m, Corpus: c, Opt: opt, Out: out, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if _, err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out
}
