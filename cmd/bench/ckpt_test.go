package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"lipformer/bench"
	"lipformer/data"
	"lipformer/internal/runtest"
	"lipformer/model"
	"lipformer/spec"
	"lipformer/train"
)

// TestCheckpoints: -ckpt times saved models in alternation, each named by its run
// directory, from its own weights with its run's settings, on the batch its run would
// draw next: its eval loss is that of the saved model on that batch.
func TestCheckpoints(t *testing.T) {
	dir := t.TempDir()
	text := runtest.TextFile(t, strings.Repeat("It was the best of times, it was the worst of times. ", 40))
	opt := train.DefaultOptions()
	opt.Steps, opt.Batch, opt.Warmup, opt.EvalEvery, opt.EvalBytes = 3, 2, 0, 3, 100
	dp := runtest.Train(t, text, data.Options{}, model.Config{Arch: spec.DP, Layers: 1, Heads: 2, Width: 8, Context: 8, Norm: spec.PreLN,
		Dtype: spec.Float32, Std: 0.3}, opt, filepath.Join(dir, "dp"))
	opt.Muon, opt.PowerIters, opt.Batch = 0.5, 3, 3
	inv := runtest.Train(t, text, data.Options{}, model.Config{Arch: spec.InvertibleL2, Layers: 1, Heads: 2, Width: 8, Context: 8, LipC: 0.9,
		Norm: spec.NoLN, Dtype: spec.Float32, Std: 0.3}.WithCertifiedRecipe(), opt, filepath.Join(dir, "inv"))

	var stdout, stderr bytes.Buffer
	args := []string{"-ckpt", dp + "," + inv, "-modes", "train,eval", "-reps", "2", "-warmup-reps", "0", "-interleave", "-json"}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var rs []bench.Measurement
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var r bench.Measurement
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		rs = append(rs, r)
	}
	if len(rs) != 4 {
		t.Fatalf("%d records, want 4:\n%s", len(rs), stdout.String())
	}
	for i, want := range []struct {
		config, arch, mode string
		batch, powerIters  int
	}{{"dp", "dp", "train", 2, 8}, {"inv", "invertible-l2+recipe+muon", "train", 3, 3}, {"dp", "dp", "eval", 2, 0}, {"inv", "invertible-l2+recipe+muon", "eval", 3, 0}} {
		r := rs[i]
		if r.Config != want.config || r.Arch != want.arch || r.Mode != want.mode || r.Batch != want.batch || r.PowerIters != want.powerIters {
			t.Errorf("record %d: %s %s %s, batch %d, %d power iterations; want %s %s %s, %d, %d",
				i, r.Config, r.Arch, r.Mode, r.Batch, r.PowerIters, want.config, want.arch, want.mode, want.batch, want.powerIters)
		}
		if want.config == "inv" && r.PairedWith != "dp" {
			t.Errorf("record %d paired with %q, want dp", i, r.PairedWith)
		}
	}

	path := filepath.Join(inv, "ckpt.safetensors")
	m, ck, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := data.Load(context.Background(), text, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := c.Vocab.EncodeCompact(c.Train)
	if err != nil {
		t.Fatal(err)
	}
	s, err := data.NewSampler(tokens, m.Cfg.Context, opt.Batch, opt.Seed)
	if err != nil {
		t.Fatal(err)
	}
	step, err := ck.MetaInt(train.MetaStep)
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.NewProgram(model.Eval, opt.Batch)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := s.Batch(step, p.Inputs, p.Targets); err != nil {
		t.Fatal(err)
	}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	want, err := p.Loss()
	if err != nil {
		t.Fatal(err)
	}
	if rs[3].Loss != want || rs[3].Checkpoint != path {
		t.Errorf("eval loss %v of %q, want %v: the saved model's on its run's next batch, from %s", rs[3].Loss, rs[3].Checkpoint, want, path)
	}
}
