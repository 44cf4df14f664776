package flow

import (
	"strings"
	"testing"

	"lipformer/model"
	"lipformer/spec"
)

// experimentModel is a float32 invertible-l2 model of the test shapes, as a checkpoint
// would hold it, and token windows for it.
func experimentModel(t *testing.T) (*model.Model, []int) {
	t.Helper()
	m, err := model.New(model.Config{Arch: spec.InvertibleL2, Layers: 2, Heads: 2, Width: testD, Context: testT, Vocab: 7, Norm: spec.NoLN,
		LipC: testC, Dtype: spec.Float32, Std: 0.3}, 5)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, testBatch*testT)
	for i := range ids {
		ids[i] = (3*i + 1) % 7
	}
	return m, ids
}

// TestExperimentInverts: every certified sub-block of invertible-l2 inverts the data
// windows as a stack and the adversarial and random inputs at each spread, in that order,
// and the experiment computes with a float64 copy of the model.
func TestExperimentInverts(t *testing.T) {
	m, ids := experimentModel(t)
	cfg := ExperimentConfig{Batch: testBatch, Spreads: []float64{1, 10}, Tol: 1e-10, MaxIter: 500, MaxError: 1e-6, PowerIters: 100, Seed: 1}
	e, err := NewExperiment(m, ids, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Model.Cfg.Dtype != spec.Float64 || m.Cfg.Dtype != spec.Float32 {
		t.Errorf("experiment model %s, given model %s: want a float64 copy", e.Model.Cfg.Dtype, m.Cfg.Dtype)
	}
	var calls [][2]int
	records, err := e.Run(func(done, total int) { calls = append(calls, [2]int{done, total}) })
	if err != nil {
		t.Fatal(err)
	}
	subs := len(e.Stack.Subs) // 4: two blocks of attention and MLP
	if want := subs * (1 + 2*len(cfg.Spreads)); len(records) != want {
		t.Fatalf("%d records, want %d", len(records), want)
	}
	// progress: the stack's inversions at once, then one call per sub-block inversion
	if last := calls[len(calls)-1]; len(calls) != 1+2*len(cfg.Spreads)*subs || calls[0] != [2]int{subs, len(records)} || last != [2]int{len(records), len(records)} {
		t.Errorf("progress calls %v, want %d of them from (%d, %d) to (%d, %d)", calls, 1+2*len(cfg.Spreads)*subs, subs, len(records), len(records), len(records))
	}
	for i, r := range records {
		kind, spread := InputData, 0.0
		if i >= subs {
			k := (i - subs) / subs
			kind, spread = []string{InputAdversarial, InputRandom}[k/len(cfg.Spreads)], cfg.Spreads[k%len(cfg.Spreads)]
		}
		if r.Input != kind || r.Spread != spread || r.Stack != (kind == InputData) || r.Block != e.Stack.Subs[i%subs].Name {
			t.Errorf("record %d: %s %g (stack %t) of %s, want %s %g of %s", i, r.Input, r.Spread, r.Stack, r.Block, kind, spread, e.Stack.Subs[i%subs].Name)
		}
		if r.Arch != "invertible-l2" || !r.Certified || !r.Converged || r.Failed || !(float64(r.Error) <= cfg.MaxError) || len(r.Errors) != r.Iterations {
			t.Errorf("record %d: %+v, want a certified inversion to within %g", i, r, cfg.MaxError)
		}
	}
}

func TestExperimentConfigErrors(t *testing.T) {
	m, ids := experimentModel(t)
	good := ExperimentConfig{Batch: testBatch, Spreads: []float64{1}, Tol: 1e-10, MaxIter: 10, MaxError: 1e-6, Seed: 1}
	for want, c := range map[string]func(*ExperimentConfig){
		"batch 0":                    func(c *ExperimentConfig) { c.Batch = 0 },
		"spread -1":                  func(c *ExperimentConfig) { c.Spreads = []float64{-1} },
		"tolerance 0":                func(c *ExperimentConfig) { c.Tol = 0 },
		"iteration cap 0":            func(c *ExperimentConfig) { c.MaxIter = 0 },
		"reconstruction error bound": func(c *ExperimentConfig) { c.MaxError = 0 },
		"-1 power iterations":        func(c *ExperimentConfig) { c.PowerIters = -1 },
		"token ids":                  func(c *ExperimentConfig) { c.Batch = 1 },
	} {
		cfg := good
		c(&cfg)
		if _, err := NewExperiment(m, ids, cfg, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v", want, err)
		}
	}
}
