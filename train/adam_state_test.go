package train

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"lipformer/safetensors"
)

// cloneParams returns params with copied values and fresh gradient slices.
func cloneParams[T Float](params []Param[T]) []Param[T] {
	out := make([]Param[T], len(params))
	for i, p := range params {
		out[i] = p
		out[i].Value = append([]T(nil), p.Value...)
		out[i].Grad = make([]T, len(p.Grad))
	}
	return out
}

// stepBoth feeds the same random gradients to two optimizers over parameter
// lists of equal shape and steps both.
func stepBoth[T Float](t *testing.T, rng *rand.Rand, a, b *Adam[T], pa, pb []Param[T], lr float64) {
	t.Helper()
	fillGrads(rng, pa)
	for i := range pa {
		copy(pb[i].Grad, pa[i].Grad)
	}
	if err := a.Step(lr); err != nil {
		t.Fatal(err)
	}
	if err := b.Step(lr); err != nil {
		t.Fatal(err)
	}
}

// sameBits reports whether two slices are bit-identical.
func sameBits[T Float](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(float64(a[i])) != math.Float64bits(float64(b[i])) {
			return false
		}
	}
	return true
}

// sameValues reports whether two parameter lists hold bit-identical values.
func sameValues[T Float](a, b []Param[T]) bool {
	for i := range a {
		if !sameBits(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}

// trained is a new optimizer over ps after n steps with random gradients at rate lr.
func trained[T Float](t *testing.T, rng *rand.Rand, ps []Param[T], cfg AdamConfig, n int, lr float64) *Adam[T] {
	t.Helper()
	a, err := NewAdam(ps, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		fillGrads(rng, ps)
		if err := a.Step(lr); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// roundTrip passes optimizer state through a safetensors stream.
func roundTrip(t *testing.T, tensors []safetensors.Tensor, meta map[string]string) ([]safetensors.Tensor, map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, tensors, meta); err != nil {
		t.Fatal(err)
	}
	tensors, meta, err := safetensors.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return tensors, meta
}

// checkStateContinuation: an optimizer restored from the saved state continues as the
// uninterrupted one; with muon > 0 on muonParams, whose matrices Muon updates.
func checkStateContinuation[T Float](t *testing.T, muon float64) {
	rng := rand.New(rand.NewPCG(5, 6))
	cfg := AdamConfig{Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, WeightDecay: 0.1, Muon: muon}
	pa, _, _ := testParams[T](rng)
	if muon > 0 {
		pa = muonParams[T](rng)
	}
	a := trained(t, rng, pa, cfg, 3, 1e-2)
	tensors, meta := a.State()
	tensors, meta = roundTrip(t, tensors, meta)
	pb, pc := cloneParams(pa), cloneParams(pa)
	b, err := NewAdam(pb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.LoadState(tensors, meta); err != nil {
		t.Fatal(err)
	}
	if b.Steps() != 3 {
		t.Fatalf("restored optimizer has %d steps, want 3", b.Steps())
	}
	fresh, err := NewAdam(pc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		stepBoth(t, rng, a, b, pa, pb, 1e-2)
		for i := range pa {
			copy(pc[i].Grad, pa[i].Grad)
		}
		if err := fresh.Step(1e-2); err != nil {
			t.Fatal(err)
		}
	}
	if !sameValues(pa, pb) {
		t.Fatal("training resumed from the saved state differs from uninterrupted training")
	}
	if sameValues(pa, pc) {
		t.Fatal("an optimizer without the saved state matches too: the test cannot see the state")
	}
	sa, _ := a.State()
	sb, _ := b.State()
	for i := range sa {
		if sa[i].Name != sb[i].Name || !sameBits(sa[i].Data.([]T), sb[i].Data.([]T)) {
			t.Fatalf("state %q differs after resuming", sa[i].Name)
		}
	}
}

func TestAdamStateRoundTripContinuesBitIdentically(t *testing.T) {
	t.Run("float32", func(t *testing.T) { checkStateContinuation[float32](t, 0) })
	t.Run("float64", func(t *testing.T) { checkStateContinuation[float64](t, 0) })
	t.Run("float32 with Muon", func(t *testing.T) { checkStateContinuation[float32](t, 5) })
}

// TestAdamStateViewsTheMoments: State's tensors are the optimizer's moments themselves,
// not copies (a checkpoint of a large model would otherwise allocate twice its
// parameters), so a later Step shows in them; the step count is the one at the call.
func TestAdamStateViewsTheMoments(t *testing.T) {
	p := Param[float64]{Name: "w", Value: []float64{1}, Grad: []float64{1}}
	a, err := NewAdam([]Param[float64]{p}, DefaultAdamConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Step(1e-3); err != nil {
		t.Fatal(err)
	}
	state, meta := a.State()
	m := state[0].Data.([]float64)[0]
	if err := a.Step(1e-3); err != nil {
		t.Fatal(err)
	}
	if state[0].Data.([]float64)[0] == m || state[0].Data.([]float64)[0] != a.m[0][0] || meta[AdamStepKey] != "1" {
		t.Fatal("the exported state is not a view of the moments, or its step count changed")
	}
}

func TestAdamLoadStateRejectsMismatches(t *testing.T) {
	newOpt := func() *Adam[float32] {
		params := []Param[float32]{
			{Name: "w", Value: make([]float32, 4), Grad: []float32{1, 2, 3, 4}, Decay: true},
			{Name: "b", Value: make([]float32, 2), Grad: []float32{-1, 1}},
		}
		a, err := NewAdam(params, DefaultAdamConfig())
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	src := newOpt()
	for range 2 {
		if err := src.Step(1e-3); err != nil {
			t.Fatal(err)
		}
	}
	good, goodMeta := src.State()
	replace := func(name string, tensor safetensors.Tensor) []safetensors.Tensor {
		var out []safetensors.Tensor
		for _, x := range good {
			if x.Name == name {
				x = tensor
			}
			out = append(out, x)
		}
		return out
	}
	without := func(name string) []safetensors.Tensor {
		var out []safetensors.Tensor
		for _, x := range good {
			if x.Name != name {
				out = append(out, x)
			}
		}
		return out
	}
	weights := safetensors.New("w", []int{4}, make([]float32, 4))
	tests := []struct {
		name    string
		tensors []safetensors.Tensor
		meta    map[string]string
		want    []string
	}{
		{"no step", good, nil, []string{AdamStepKey}},
		{"bad step", good, map[string]string{AdamStepKey: "-3"}, []string{AdamStepKey, "-3"}},
		{"missing m", without("adam.m.b"), goodMeta, []string{`"adam.m.b"`, `parameter "b"`}},
		{"missing v", without("adam.v.w"), goodMeta, []string{`"adam.v.w"`, `parameter "w"`}},
		{"wrong shape", replace("adam.v.w", safetensors.New("adam.v.w", []int{2, 2}, make([]float32, 4))), goodMeta,
			[]string{`"adam.v.w"`, "[2 2]", `parameter "w" needs [4]`}},
		{"wrong length", replace("adam.m.b", safetensors.New("adam.m.b", []int{3}, make([]float32, 3))), goodMeta,
			[]string{`"adam.m.b"`, `parameter "b" needs [2]`}},
		{"wrong dtype", replace("adam.m.w", safetensors.New("adam.m.w", []int{4}, make([]float64, 4))), goodMeta,
			[]string{`parameter "w"`, "F64"}},
		{"unknown parameter", append(append([]safetensors.Tensor(nil), good...),
			safetensors.New("adam.m.gone", []int{1}, []float32{0})), goodMeta, []string{`"adam.m.gone"`, "no parameter"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newOpt()
			err := a.LoadState(append(tt.tensors, weights), tt.meta)
			if err == nil {
				t.Fatalf("got no error, want one mentioning %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not mention %q", err, w)
				}
			}
			after, _ := a.State()
			for _, x := range after {
				for _, e := range x.Data.([]float32) {
					if e != 0 || a.Steps() != 0 {
						t.Fatal("a failed LoadState changed the optimizer")
					}
				}
			}
		})
	}
	if err := newOpt().LoadState(append(good, weights), goodMeta); err != nil {
		t.Fatalf("loading a matching state beside model weights: %v", err)
	}
}
