package train

import (
	"errors"
	"math"
	"strings"
	"testing"

	"lipformer/model"
	"lipformer/spec"
)

func stepperModel(t *testing.T, arch spec.Arch, dtype spec.Dtype) *model.Model {
	t.Helper()
	cfg := model.Config{Arch: arch, Layers: 1, Heads: 2, Width: 8, Context: 6, Vocab: 5, Norm: spec.PreLN, LipC: 0.9, Dtype: dtype, Std: 0.1}
	m, err := model.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func fillBatch(inputs, targets []int, vocab int) {
	for i := range inputs {
		inputs[i], targets[i] = (3*i)%vocab, (3*i+1)%vocab
	}
}

// TestStepperLearnsABatch: repeated steps on one batch lower its loss, for a plain and an
// invertible architecture.
func TestStepperLearnsABatch(t *testing.T) {
	for _, arch := range []spec.Arch{spec.L2, spec.InvertibleL2} {
		m := stepperModel(t, arch, spec.Float64)
		s, err := NewStepper[float64](m, 2, StepConfig{Adam: DefaultAdamConfig(), Clip: 1, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		fillBatch(s.Prog.Inputs, s.Prog.Targets, 5)
		var first, last float64
		for i := 0; i < 20; i++ {
			loss, norm, err := s.Step(i, 1e-2)
			if err != nil {
				t.Fatal(err)
			}
			if !(norm > 0) {
				t.Fatalf("%s step %d: gradient norm %v", arch, i, norm)
			}
			if i == 0 {
				first = loss
			}
			last = loss
		}
		if !(last < first-0.5) {
			t.Errorf("%s: loss %v -> %v after 20 steps on one batch", arch, first, last)
		}
		if s.Adam.Steps() != 20 {
			t.Errorf("%s: %d optimizer steps, want 20", arch, s.Adam.Steps())
		}
		s.Close()
	}
}

// TestStepperClips: Gradients returns the norm before clipping and leaves the clipped
// gradient of norm Clip in the optimizer's parameters.
func TestStepperClips(t *testing.T) {
	m := stepperModel(t, spec.DP, spec.Float32)
	s, err := NewStepper[float32](m, 2, StepConfig{Adam: DefaultAdamConfig(), Clip: 1e-3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fillBatch(s.Prog.Inputs, s.Prog.Targets, 5)
	_, norm, err := s.Gradients(0)
	if err != nil {
		t.Fatal(err)
	}
	if !(norm > 1e-3) {
		t.Fatalf("gradient norm %v, want > the clip", norm)
	}
	if got := GlobalNorm(s.grads); math.Abs(got-1e-3) > 1e-7 {
		t.Errorf("clipped norm %v, want 1e-3", got)
	}
}

// TestStepperNonFinite: a non-finite loss stops the step before the update.
func TestStepperNonFinite(t *testing.T) {
	m := stepperModel(t, spec.DP, spec.Float64)
	s, err := NewStepper[float64](m, 1, StepConfig{Adam: DefaultAdamConfig(), Clip: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fillBatch(s.Prog.Inputs, s.Prog.Targets, 5)
	w := m.Tok.W.Value.Data().([]float64)
	w[0] = math.NaN()
	before := append([]float64(nil), m.Pos.W.Value.Data().([]float64)...)
	if _, _, err := s.Step(0, 1e-2); !errors.Is(err, ErrNonFinite) {
		t.Fatalf("error %v, want ErrNonFinite", err)
	}
	for i, v := range m.Pos.W.Value.Data().([]float64) {
		if v != before[i] {
			t.Fatal("weights changed by a non-finite step")
		}
	}
	if s.Adam.Steps() != 0 {
		t.Errorf("%d optimizer steps, want 0", s.Adam.Steps())
	}
}

func TestStepperErrors(t *testing.T) {
	m := stepperModel(t, spec.DP, spec.Float64)
	if _, err := NewStepper[float32](m, 2, StepConfig{Adam: DefaultAdamConfig(), Clip: 1, Seed: 1}); err == nil || !strings.Contains(err.Error(), "float64") {
		t.Errorf("float32 stepper of a float64 model: error %v", err)
	}
	if _, err := NewStepper[float64](m, 2, StepConfig{Adam: DefaultAdamConfig(), Clip: -1, Seed: 1}); err == nil || !strings.Contains(err.Error(), "clip") {
		t.Errorf("negative clip: error %v", err)
	}
	if _, err := NewStepper[float64](m, 2, StepConfig{Adam: AdamConfig{Beta1: 2}, Clip: 1, Seed: 1}); err == nil {
		t.Error("bad Adam config: no error")
	}
	if _, err := NewStepper[float64](m, 0, StepConfig{Adam: DefaultAdamConfig(), Clip: 1, Seed: 1}); err == nil {
		t.Error("batch 0: no error")
	}
}
