package bench

import (
	"path/filepath"
	"strings"
	"testing"

	"lipformer/model"
	"lipformer/spec"
	"lipformer/train"
)

// savedRecipe saves a tiny invertible-l2 recipe model, its weights moved off the seed's by
// training steps, and returns its file, the config and training options it stands for, and
// a batch.
func savedRecipe(t *testing.T) (string, model.Config, train.Options, []int, []int) {
	t.Helper()
	ps, err := model.FindPresets("tiny")
	if err != nil {
		t.Fatal(err)
	}
	j := NewJob(ps[0], spec.InvertibleL2, Settings{Recipe: true, Seed: 3, Dtype: spec.Float32})
	m, err := model.New(j.Cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := oneStep[float32](m, j); err != nil {
			t.Fatal(err)
		}
	}
	vocab := make([]byte, m.Cfg.Vocab)
	for i := range vocab {
		vocab[i] = byte(i)
	}
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	if err := m.Save(path, vocab, nil, nil); err != nil {
		t.Fatal(err)
	}
	opt := train.DefaultOptions()
	opt.Batch, opt.LR, opt.Muon, opt.PowerIters, opt.Clip = ps[0].Batch, 3e-3, 0.5, 3, 0.5
	return path, m.Cfg, opt, j.Inputs, j.Targets
}

// TestCheckpointJob: a saved model's job starts from its weights, not the seed's, trains
// with the run's settings (learning rate, clip, Muon, power iterations), is named as a
// fresh job of its model would be, and refuses a batch of another size.
func TestCheckpointJob(t *testing.T) {
	path, cfg, opt, in, tg := savedRecipe(t)
	j, err := CheckpointJob("run", path, cfg, opt, in, tg, Settings{Steps: 1, Seed: 9, Dtype: spec.Float32})
	if err != nil {
		t.Fatal(err)
	}
	if name := j.ArchName(); name != "invertible-l2+recipe+muon" {
		t.Errorf("named %q, want invertible-l2+recipe+muon", name)
	}
	saved, _, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := j.loss(saved)
	if err != nil {
		t.Fatal(err)
	}
	r, err := j.Measure(ModeEval)
	if err != nil {
		t.Fatal(err)
	}
	fresh := NewJob(j.Preset, spec.InvertibleL2, Settings{Recipe: true, Steps: 1, Seed: 9, Dtype: spec.Float32})
	fresh.Inputs, fresh.Targets = in, tg
	fr, err := fresh.Measure(ModeEval)
	if err != nil {
		t.Fatal(err)
	}
	if r.Loss != want || r.Loss == fr.Loss || r.Checkpoint != path || r.Config != "run" {
		t.Errorf("eval loss %v (checkpoint %q, config %q), want the saved model's %v, not a fresh one's %v; from %s, named run",
			r.Loss, r.Checkpoint, r.Config, want, fr.Loss, path)
	}

	st, err := train.NewStepper[float32](saved, opt.Batch, opt.StepConfig())
	if err != nil {
		t.Fatal(err)
	}
	copy(st.Prog.Inputs, in)
	copy(st.Prog.Targets, tg)
	if _, _, err := st.Step(0, opt.LR); err != nil {
		t.Fatal(err)
	}
	st.Close()
	wantAfter, err := j.loss(saved)
	if err != nil {
		t.Fatal(err)
	}
	m, err := j.newModel()
	if err != nil {
		t.Fatal(err)
	}
	after, err := j.lossAfterStep(m)
	if err != nil {
		t.Fatal(err)
	}
	if after != wantAfter {
		t.Errorf("loss after a step %v, want %v: that of the run's own settings", after, wantAfter)
	}

	if _, err := CheckpointJob("run", path, cfg, opt, in[1:], tg, Settings{}); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("a short batch: %v, want an error naming %s", err, path)
	}
	other := j
	other.Cfg.Layers++
	if _, err := other.newModel(); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("a config the file does not hold: %v, want an error naming %s", err, path)
	}
}
