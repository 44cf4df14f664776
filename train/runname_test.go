package train

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lipformer/spec"
)

// TestRunName: the configuration's name, the architecture and the corpus, each once, and
// the minute the run starts.
func TestRunName(t *testing.T) {
	at := time.Date(2026, 12, 2, 7, 35, 59, 0, time.UTC)
	for _, c := range []struct{ config, arch, corpus, want string }{
		{"", "contractive-l2", "", "contractive-l2-opticks-20261202-0735"},
		{"", "dp", "shakespeare", "dp-shakespeare-20261202-0735"},
		{"configs/shakespeare.toml", "dp", "shakespeare", "shakespeare-dp-20261202-0735"},
		{"configs/enwik8.toml", "contractive-l2", "enwik8", "enwik8-contractive-l2-20261202-0735"},
		{"", "l2", "/data/my text.txt", "l2-my_text-20261202-0735"},
		{"", "l2", "../corpora/é.txt", "l2-_-20261202-0735"},
	} {
		if got := RunName(c.config, c.arch, c.corpus, at); got != c.want {
			t.Errorf("RunName(%q, %q, %q) = %q, want %q", c.config, c.arch, c.corpus, got, c.want)
		}
	}
}

// TestNewRunDirDoesNotCollide: a name taken by a directory or a file gets the suffix -2,
// then -3.
func TestNewRunDirDoesNotCollide(t *testing.T) {
	root := t.TempDir()
	for i, want := range []string{"r", "r-2", "r-3"} {
		got, err := NewRunDir(root, "r")
		if err != nil || got != filepath.Join(root, want) {
			t.Fatalf("call %d: %q, %v; want %q", i, got, err, filepath.Join(root, want))
		}
		if i == 0 {
			err = os.Mkdir(got, 0o755)
		} else {
			err = os.WriteFile(got, nil, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestResumeAnnouncesTheStep: a resumed run logs "resumed from step N" with its directory.
func TestResumeAnnouncesTheStep(t *testing.T) {
	c := smallCorpus(t)
	out := t.TempDir()
	opt := smallOptions(4)
	opt.EvalEvery, opt.Warmup = 2, 1
	ctx, cancel := context.WithCancel(context.Background())
	h := &cancelOn{msg: "validation", cancel: cancel, at: make(chan time.Time, 1)} // interrupts after step 2
	r := &Run{Model: smallModel(t, c, spec.L2, spec.Float32, 1), Corpus: c, Opt: opt, Out: out, Log: slog.New(h)}
	if sum, err := r.Train(ctx); err != nil || !sum.Interrupted || sum.Steps != 2 {
		t.Fatalf("first session: %v, %+v", err, sum)
	}
	d, err := OpenRun(out)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err = d.Resume()
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	r.Corpus, r.Log = c, slog.New(slog.NewTextHandler(&log, nil))
	if _, err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := `msg="resumed from step 2" dir=` + out + " steps=4"; !strings.Contains(log.String(), want) {
		t.Errorf("log:\n%s\nwant a line with %q", log.String(), want)
	}
}
