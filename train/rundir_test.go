package train

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lipformer/data"
	"lipformer/model"
	"lipformer/spec"
)

func TestActionFromDirectoryState(t *testing.T) {
	finished, interrupted := &Summary{}, &Summary{Interrupted: true}
	for _, c := range []struct {
		d    RunDir
		want Action
	}{
		{RunDir{}, ActNew},
		{RunDir{summary: finished, hasMetrics: true, hasLatest: true}, ActSkip},
		{RunDir{summary: &Summary{NonFinite: true}, hasMetrics: true}, ActSkip},
		{RunDir{summary: interrupted, hasMetrics: true, hasLatest: true}, ActResume},
		{RunDir{hasMetrics: true, hasLatest: true}, ActResume},
		{RunDir{hasMetrics: true}, ActRestart},
	} {
		if got, err := c.d.Action(); got != c.want || err != nil {
			t.Errorf("%+v: %q, %v; want %q", c.d, got, err, c.want)
		}
	}
	if _, err := (&RunDir{dir: "d", summary: interrupted, hasMetrics: true}).Action(); err == nil || !strings.Contains(err.Error(), LatestFile) {
		t.Errorf("interrupted run without a checkpoint: error %v", err)
	}
}

// TestRunDirOfATrainedRun: a run directory's state, settings, metrics and resume after a
// run that ended; before its summary, the settings come from the checkpoint's metadata.
func TestRunDirOfATrainedRun(t *testing.T) {
	c := smallCorpus(t)
	out := t.TempDir()
	d, err := OpenRun(out)
	if err != nil || d.HoldsRun() || d.Summary() != nil || d.CheckNew() != nil {
		t.Fatalf("empty directory: %+v, %v", d, err)
	}
	if act, err := d.Action(); act != ActNew || err != nil {
		t.Errorf("empty directory: action %q, %v", act, err)
	}
	m := smallModel(t, c, spec.L2, spec.Float32, 1)
	r := &Run{Model: m, Corpus: c, Opt: smallOptions(4), Out: out, Log: quiet()}
	r.Opt.Warmup = 0
	if _, err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d, err = OpenRun(out); err != nil {
		t.Fatal(err)
	}
	if act, err := d.Action(); act != ActSkip || err != nil || d.Summary() == nil || d.Summary().Steps != 4 {
		t.Errorf("finished run: action %q, %v, summary %+v", act, err, d.Summary())
	}
	if err := d.CheckNew(); err == nil || !strings.Contains(err.Error(), "already holds a run") {
		t.Errorf("new run in a finished one's directory: %v", err)
	}
	if rows, err := d.Metrics(); err != nil || len(rows.Train) != 4 {
		t.Errorf("metrics: %d training rows, %v; want 4", len(rows.Train), err)
	}
	resumed, step, err := d.Resume()
	if err != nil || step != 4 || resumed.Out != out || resumed.Opt != r.Opt || resumed.Model.Cfg != m.Cfg || resumed.Resume == nil {
		t.Errorf("resume: step %d, %+v, %v", step, resumed, err)
	}
	if err := os.Remove(d.Path(SummaryFile)); err != nil {
		t.Fatal(err)
	}
	if d, err = OpenRun(out); err != nil {
		t.Fatal(err)
	}
	cfg, opt, ok, err := d.Settings()
	if err != nil || !ok || cfg != m.Cfg || opt != r.Opt {
		t.Errorf("settings from the checkpoint: %+v, %+v, %t, %v", cfg, opt, ok, err)
	}
	if act, err := d.Action(); act != ActResume || err != nil {
		t.Errorf("run without its summary: action %q, %v", act, err)
	}
}

// TestSettingsDiff: the settings that differ are named with both values; an unknown
// vocabulary is not compared.
func TestSettingsDiff(t *testing.T) {
	cfg, opt := model.Default(), DefaultOptions()
	stored, storedOpt := cfg, opt
	stored.Vocab, storedOpt.LR, storedOpt.Steps = 65, 0.001, 10
	opt.LR = 0.002
	diffs, err := SettingsDiff(cfg, opt, stored, storedOpt)
	if want := []string{"lr: 0.002 here, 0.001 stored", "steps: 2000 here, 10 stored"}; err != nil || !slices.Equal(diffs, want) {
		t.Errorf("diffs %q, %v; want %q", diffs, err, want)
	}
	inv := cfg
	inv.Arch, inv.Norm = spec.InvertibleL2, spec.PreLN
	storedInv := inv
	storedInv.Norm = spec.NoLN // what the model was built with
	if diffs, err := SettingsDiff(inv, opt, storedInv, opt); err != nil || len(diffs) > 0 {
		t.Errorf("an invertible run asked for with norm pre, stored with none: diffs %q, %v; want none", diffs, err)
	}
	if FixedOnResume("steps") || !FixedOnResume("lr") || !FixedOnResume("arch") {
		t.Errorf("FixedOnResume: only steps may change")
	}
}

// TestResumeRefusesAnotherVocabulary: a checkpoint resumed on a corpus of other bytes is
// refused before anything is written.
func TestResumeRefusesAnotherVocabulary(t *testing.T) {
	c := smallCorpus(t)
	out := t.TempDir()
	r := &Run{Model: smallModel(t, c, spec.DP, spec.Float32, 1), Corpus: c, Opt: smallOptions(2), Out: out, Log: quiet()}
	r.Opt.Warmup = 0
	if _, err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	d, err := OpenRun(out)
	if err != nil {
		t.Fatal(err)
	}
	resumed, _, err := d.Resume()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "other.txt")
	if err := os.WriteFile(path, []byte(strings.Repeat("0123456789 ", 300)), 0o644); err != nil {
		t.Fatal(err)
	}
	if resumed.Corpus, err = data.Load(context.Background(), path, data.Options{}); err != nil {
		t.Fatal(err)
	}
	resumed.Opt.Steps, resumed.Log = 4, quiet()
	before, _ := os.ReadFile(d.Path(MetricsFile))
	if _, err := resumed.Train(context.Background()); err == nil || !strings.Contains(err.Error(), "another vocabulary") {
		t.Errorf("resume on another corpus: %v", err)
	}
	if after, _ := os.ReadFile(d.Path(MetricsFile)); string(after) != string(before) {
		t.Errorf("the refused resume changed %s", MetricsFile)
	}
}

// TestResolveCorpus: a relative corpus path stored in a checkpoint is found as given, at
// the absolute path stored with it, or in the run directory, in this order, and the error
// of none names every place.
func TestResolveCorpus(t *testing.T) {
	run := t.TempDir()
	ckpt := filepath.Join(run, LatestFile)
	t.Chdir(t.TempDir())
	for _, spec := range []string{"", data.NameShakespeare, "/abs/corpus.txt"} {
		if got, err := ResolveCorpus(spec, "", ckpt, nil); got != spec || err != nil {
			t.Errorf("%q: %q, %v; want it unchanged", spec, got, err)
		}
	}
	abs := filepath.Join(t.TempDir(), "c.txt")
	_, err := ResolveCorpus("c.txt", abs, ckpt, nil)
	cwd, _ := os.Getwd()
	for _, want := range []string{"corpus file c.txt", ckpt, filepath.Join(cwd, "c.txt"), abs, filepath.Join(run, "c.txt")} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("corpus nowhere: error %v, want one mentioning %q", err, want)
		}
	}
	if err := os.WriteFile(filepath.Join(run, "c.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ResolveCorpus("c.txt", abs, ckpt, nil); got != filepath.Join(run, "c.txt") || err != nil {
		t.Errorf("corpus in the run directory: %q, %v", got, err)
	}
	if err := os.WriteFile(abs, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ResolveCorpus("c.txt", abs, ckpt, nil); got != abs || err != nil {
		t.Errorf("corpus at its stored absolute path: %q, %v; want %s", got, err, abs)
	}
	if err := os.WriteFile("c.txt", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ResolveCorpus("c.txt", abs, ckpt, nil); got != "c.txt" || err != nil {
		t.Errorf("corpus here: %q, %v", got, err)
	}
}

// TestOpenRunSetsATornSummaryAside: an empty or truncated summary file is not an error:
// the directory has no summary, SummaryError names the file, and a run with a checkpoint
// is to be resumed.
func TestOpenRunSetsATornSummaryAside(t *testing.T) {
	c := smallCorpus(t)
	out := t.TempDir()
	r := &Run{Model: smallModel(t, c, spec.DP, spec.Float32, 1), Corpus: c, Opt: smallOptions(10), Out: out, Log: quiet()}
	if _, err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(out, SummaryFile)
	b, _ := os.ReadFile(path)
	for _, torn := range [][]byte{nil, b[:len(b)/3]} {
		if err := os.WriteFile(path, torn, 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := OpenRun(out)
		if err != nil {
			t.Fatalf("%d bytes of summary: %v", len(torn), err)
		}
		if d.Summary() != nil || d.SummaryError() == nil || !strings.Contains(d.SummaryError().Error(), path) {
			t.Errorf("%d bytes of summary: summary %v, error %v; want none, and an error naming %s", len(torn), d.Summary(), d.SummaryError(), path)
		}
		if act, err := d.Action(); act != ActResume || err != nil {
			t.Errorf("%d bytes of summary: action %q, %v; want %q", len(torn), act, err, ActResume)
		}
	}
}
