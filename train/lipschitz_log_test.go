package train

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"lipformer/model"
	"lipformer/ops"
	"lipformer/spec"
)

// With LogLipschitz 4, a 12-step run of contractive-l2 under the token2 bound logs its
// layers at steps 4, 8 and 12 and the rows read back. The certified token-norm constant,
// with exact spectral norms, is about min(c, bound) while training: the scale divides by
// power-iteration estimates, one step behind fast-moving weights (here 0.3-scale weights at
// learning rate 3e-3 exceed c by under 2%). After more iterations it is at most c.
func TestLogLipschitz(t *testing.T) {
	c := smallCorpus(t)
	cfg := model.Config{Arch: spec.ContractiveL2, Layers: 2, Heads: 2, Width: 16, Context: 16, Vocab: c.Vocab.Size(), Norm: spec.PreLN,
		LipC: 0.9, Dtype: spec.Float64, Std: 0.3, L2Bound: ops.BoundTok2, L2Temp: true, L2PosBias: true}
	m, err := model.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	o := smallOptions(12)
	o.LogLipschitz = 4
	out := t.TempDir()
	if _, err := (&Run{Model: m, Corpus: c, Opt: o, Out: out, Log: quiet()}).Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	mt, err := ReadMetrics(filepath.Join(out, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(mt.Lipschitz) != 3 || mt.Lipschitz[0].Step != 4 || mt.Lipschitz[2].Step != 12 {
		t.Fatalf("lipschitz rows %+v, want steps 4, 8, 12", mt.Lipschitz)
	}
	for _, row := range mt.Lipschitz {
		if len(row.Layers) != 2 {
			t.Fatalf("step %d: %d layers, want 2", row.Step, len(row.Layers))
		}
		for _, l := range row.Layers {
			if l.Form != "token2" || !math.IsInf(float64(l.Kim), 1) || len(l.BiasPrev) != 2 || len(l.LogTemp) != 2 {
				t.Errorf("step %d %s: %+v", row.Step, l.Name, l)
			}
			want := math.Min(0.9, float64(l.Tok2))
			if cert := float64(l.CertTok2); cert > want*1.02 || cert < 0.5*want {
				t.Errorf("step %d %s: certified %v, bound %v, scale %v: want about min(c, bound)", row.Step, l.Name, cert, l.Tok2, l.Scale)
			}
		}
	}
	m.PowerIterate(50)
	layers, err := m.AttentionReport()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		if cert := float64(l.CertTok2); cert > 0.9*(1+1e-9) {
			t.Errorf("%s after 50 more power iterations: certified %v > c", l.Name, cert)
		}
	}
}

// A resumed run keeps the bound rows up to its checkpoint, in the order a run writes them.
func TestLogLipschitzSurvivesResume(t *testing.T) {
	c := smallCorpus(t)
	cfg := model.Config{Arch: spec.ContractiveL2, Layers: 1, Heads: 2, Width: 16, Context: 16, Vocab: c.Vocab.Size(), Norm: spec.PreLN,
		LipC: 0.9, Dtype: spec.Float32, Std: 0.02, L2Bound: ops.BoundTok2, L2Temp: true, L2PosBias: true}
	m, err := model.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	o := smallOptions(10)
	o.LogLipschitz, o.EvalEvery = 5, 5
	out := t.TempDir()
	if _, err := (&Run{Model: m, Corpus: c, Opt: o, Out: out, Log: quiet()}).Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(out, LatestFile)
	m2, ck, err := model.Load(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	o.Steps = 15
	if _, err := (&Run{Model: m2, Resume: ck, Corpus: c, Opt: o, Out: out, Log: quiet()}).Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	mt, err := ReadMetrics(filepath.Join(out, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	var steps []int
	for _, r := range mt.Lipschitz {
		steps = append(steps, r.Step)
	}
	if len(steps) != 3 || steps[0] != 5 || steps[1] != 10 || steps[2] != 15 {
		t.Errorf("bound rows at steps %v after resuming, want [5 10 15]", steps)
	}
}
