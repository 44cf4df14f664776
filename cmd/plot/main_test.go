package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lipformer/model"
	"lipformer/ngram"
	"lipformer/safetensors"
	"lipformer/spec"
	"lipformer/train"
)

func contains(err error, s string) bool { return strings.Contains(err.Error(), s) }

// writeMetrics writes m as dir/metrics.jsonl with the training package's writer.
func writeMetrics(t *testing.T, dir string, m train.Metrics) {
	t.Helper()
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, train.MetricsFile), buf.String())
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeSummary writes dir/summary.json for a run of arch with batch 2 and context 8.
func writeSummary(t *testing.T, dir, arch string, nonFinite bool) {
	t.Helper()
	sum := train.Summary{Model: model.Default(), Options: train.DefaultOptions(), NonFinite: nonFinite}
	a, err := spec.ParseArch(arch)
	if err != nil {
		t.Fatal(err)
	}
	sum.Model.Arch, sum.Model.Context, sum.Options.Batch = a, 8, 2
	b, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, train.SummaryFile), string(b))
}

// runs writes a normal run (with a summary), a diverged run (NaN rows, with a checkpoint
// holding only metadata) and returns their directories.
func runs(t *testing.T) (normal, diverged string) {
	root := t.TempDir()
	normal, diverged = filepath.Join(root, "normal"), filepath.Join(root, "diverged")
	writeMetrics(t, normal, train.Metrics{Train: trainRows(4, 3, 2.5, 2, 1.8),
		Eval: []train.EvalRow{{Step: 2, ValLoss: 2.7, ElapsedS: 3.1}, {Step: 5, ValLoss: 1.9, ElapsedS: 5.1}}})
	writeSummary(t, normal, "l2", false)
	writeMetrics(t, diverged, train.Metrics{Train: trainRows(4, 3.5, 6, math.NaN()),
		Eval: []train.EvalRow{{Step: 2, ValLoss: 3.2, ElapsedS: 3.1}}})
	cfg, opt := model.Default(), train.DefaultOptions()
	cfg.Arch, cfg.Context, opt.Batch = spec.DP, 8, 4
	c, _ := json.Marshal(cfg)
	o, _ := json.Marshal(opt)
	meta := map[string]string{model.MetaConfig: string(c), train.MetaTrain: string(o)}
	ts := []safetensors.Tensor{safetensors.New("w", []int{2}, []float32{1, 2})}
	if err := safetensors.WriteFile(filepath.Join(diverged, train.LatestFile), ts, meta); err != nil {
		t.Fatal(err)
	}
	return normal, diverged
}

func TestPlotPNG(t *testing.T) {
	normal, diverged := runs(t)
	out := filepath.Join(t.TempDir(), "curves.png")
	var stdout, stderr bytes.Buffer
	args := []string{"-runs", normal + "," + diverged, "-metric", "train_bpc", "-smooth", "2", "-x", "tokens", "-logy", "-out", out}
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatalf("%s is not a PNG: %v", out, err)
	}
}

func TestPlotSVGMarksTheDivergedRun(t *testing.T) {
	normal, _ := runs(t)
	out := filepath.Join(t.TempDir(), "val.svg")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-runs", filepath.Join(filepath.Dir(normal), "*"), "-metric", "val_bpc", "-title", "two runs", "-out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(b)
	for _, want := range []string{"<svg", "two runs", "dp batch=4 (diverged at step 3)", "l2 batch=2"} {
		if !strings.Contains(svg, want) {
			t.Errorf("%s lacks %q", out, want)
		}
	}
}

func TestLoadRunSettingsFromCheckpointOrDirectory(t *testing.T) {
	_, diverged := runs(t)
	r, err := loadRun(diverged)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := r.tokensPerStep(); err != nil || n != 32 {
		t.Errorf("tokens per step from the checkpoint: %d, %v; want 4 x 8", n, err)
	}
	bare := filepath.Join(t.TempDir(), "bare")
	writeMetrics(t, bare, train.Metrics{Train: trainRows(1)})
	if r, err = loadRun(bare); err != nil || r.cfg != nil {
		t.Fatalf("run without settings: %+v, %v", r, err)
	}
	if _, err := r.tokensPerStep(); err == nil || !contains(err, "-x tokens") {
		t.Errorf("tokens of a run without settings: error %v", err)
	}
}

func TestPlotErrors(t *testing.T) {
	normal, _ := runs(t)
	bad := filepath.Join(t.TempDir(), "bad")
	good := `{"kind":"train","step":0,"loss":1,"bpc":1.4,"lr":0.001,"grad_norm":1,"tokens_per_s":1,"elapsed_s":1}`
	writeFile(t, filepath.Join(bad, train.MetricsFile), good+"\n"+good+"\n"+`{"kind":"train","step":2,"loss":`+"\n")
	brokenSum := filepath.Join(t.TempDir(), "brokensum")
	writeMetrics(t, brokenSum, train.Metrics{Train: trainRows(1)})
	writeFile(t, filepath.Join(brokenSum, train.SummaryFile), "{")
	png := filepath.Join(t.TempDir(), "x.png")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-runs", bad}, fmt.Sprintf("%s line 3", filepath.Join(bad, train.MetricsFile))},
		{[]string{"-runs", brokenSum}, filepath.Join(brokenSum, train.SummaryFile)},
		{[]string{}, "-runs is required"},
		{[]string{"-runs", normal + ",,"}, "empty entry"},
		{[]string{"-runs", filepath.Join(t.TempDir(), "missing")}, "missing"},
		{[]string{"-runs", filepath.Join(t.TempDir(), "none*")}, "no run directory"},
		{[]string{"-runs", normal, "-out", "x.gif"}, "-out"},
		{[]string{"-runs", normal, "-metric", "loss"}, "-metric"},
		{[]string{"-runs", normal, "-x", "epoch"}, "-x"},
		{[]string{"-runs", normal, "-metric", "val_bpc", "-smooth", "3"}, "-smooth"},
		{[]string{"-runs", normal, "extra"}, "unexpected arguments"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(append([]string{"-out", png}, c.args...), &stdout, &stderr)
		if err == nil || !contains(err, c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}

// -baselines draws the n-gram baselines of the first summary that has them, labelled with
// their bpc, and is an error when no summary has any.
func TestPlotBaselines(t *testing.T) {
	normal, diverged := runs(t)
	out := filepath.Join(t.TempDir(), "val.svg")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-runs", normal + "," + diverged, "-metric", "val_bpc", "-baselines", "-out", out}, &stdout, &stderr); err == nil || !contains(err, "no run's summary.json has n-gram baselines") {
		t.Errorf("without baselines: %v", err)
	}
	sum := train.Summary{Model: model.Default(), Options: train.DefaultOptions(), Baselines: []ngram.Result{{Order: 2, BPC: 2.6}, {Order: 5, BPC: 2.1}}}
	sum.Model.Context, sum.Options.Batch = 8, 2
	b, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(normal, train.SummaryFile), string(b))
	if err := run([]string{"-runs", diverged + "," + normal, "-metric", "val_bpc", "-baselines", "-out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	svg, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bigram (test) 2.600", "5-gram (test) 2.100"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("%s lacks %q", out, want)
		}
	}
}

// trainRows returns training rows at steps 0.. with the given losses (nats), gradient
// norms 10*step and elapsed seconds step+1.
func trainRows(losses ...float64) []train.TrainRow {
	rows := make([]train.TrainRow, len(losses))
	for i, l := range losses {
		rows[i] = train.TrainRow{Step: i, Loss: l, LR: 1e-3, GradNorm: 10 * float64(i), ElapsedS: float64(i + 1)}
	}
	return rows
}

// TestPlotBaselinesByDefault: a bpc plot draws the summaries' baselines without
// -baselines, and -baselines=false leaves them out; another metric draws none, and asking
// for them there is an error; no summary with baselines is then a note, not an error.
func TestPlotBaselinesByDefault(t *testing.T) {
	normal, diverged := runs(t)
	out := filepath.Join(t.TempDir(), "val.svg")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-runs", normal, "-metric", "val_bpc", "-out", out}, &stdout, &stderr); err != nil || !strings.Contains(stderr.String(), "no run's summary.json has n-gram baselines: none drawn") {
		t.Errorf("no baselines stored: error %v, stderr %q; want a note", err, stderr.String())
	}
	sum := train.Summary{Model: model.Default(), Options: train.DefaultOptions(), Baselines: []ngram.Result{{Order: 2, BPC: 2.6}}}
	sum.Model.Context, sum.Options.Batch = 8, 2
	b, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(normal, train.SummaryFile), string(b))
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"-metric", "val_bpc"}, true},
		{[]string{"-metric", "train_bpc"}, true},
		{[]string{"-metric", "val_bpc", "-baselines=false"}, false},
		{[]string{"-metric", "grad_norm"}, false},
	} {
		args := append([]string{"-runs", diverged + "," + normal, "-out", out}, c.args...)
		if err := run(args, &stdout, &stderr); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		svg, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(svg), "bigram (test) 2.600"); got != c.want {
			t.Errorf("%q: baseline drawn %v, want %v", c.args, got, c.want)
		}
	}
	err = run([]string{"-runs", normal, "-metric", "grad_norm", "-baselines", "-out", out}, &stdout, &stderr)
	if err == nil || !contains(err, "-metric grad_norm is not") {
		t.Errorf("-baselines with grad_norm: error %v", err)
	}
}

// TestPlotWarnsOfFewPoints: a run with fewer than 5 points of the metric is named in a
// warning; one with 5 is not.
func TestPlotWarnsOfFewPoints(t *testing.T) {
	normal, diverged := runs(t)
	out := filepath.Join(t.TempDir(), "c.png")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-runs", normal + "," + diverged, "-metric", "train_bpc", "-out", out}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	warn := stderr.String()
	if !strings.Contains(warn, "warning: "+diverged+" has 3 point(s) of train_bpc, too few") || strings.Contains(warn, normal+" has") {
		t.Errorf("stderr %q: want a warning for %s (3 finite points) and none for %s (5)", warn, diverged, normal)
	}
	stderr.Reset()
	if err := run([]string{"-runs", normal, "-metric", "val_bpc", "-out", out}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), normal+" has 2 point(s) of val_bpc") {
		t.Errorf("stderr %q: want a warning of 2 validation points", stderr.String())
	}
}
