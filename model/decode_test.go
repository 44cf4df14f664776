package model

import (
	"fmt"
	"lipformer/spec"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// decoderVariants are variants() and the non-invertible attentions with post-LN and
// without LayerNorm.
func decoderVariants() []variant {
	vs := variants()
	for _, norm := range []spec.Norm{spec.PostLN, spec.NoLN} {
		for _, arch := range []string{"dp", "l2", "l2-untied", "contractive-l2"} {
			c := tiny(arch)
			c.Norm = norm
			vs = append(vs, variant{arch + "-" + norm.String(), c})
		}
	}
	return vs
}

// perturbed is New(cfg, seed) with noise of standard deviation 0.05 added to every
// parameter, so that the biases and LayerNorm gains (0 and 1 at initialisation) take
// generic values.
func perturbed(t *testing.T, cfg Config, seed uint64) *Model {
	t.Helper()
	m, err := New(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 99))
	for _, p := range m.Params() {
		v := p.Value.Data().([]float64)
		for i := range v {
			v[i] += 0.05 * r.NormFloat64()
		}
	}
	return m
}

// randomTokens draws n token ids below vocab.
func randomTokens(seed uint64, n, vocab int) []int {
	r := rand.New(rand.NewPCG(seed, 11))
	ids := make([]int, n)
	for i := range ids {
		ids[i] = r.IntN(vocab)
	}
	return ids
}

// programLogits runs a Sample program (batch 1) on tokens (at most T) and returns the
// logits of every position.
func programLogits(t *testing.T, p *Program, tokens []int) [][]float64 {
	t.Helper()
	clear(p.Inputs)
	copy(p.Inputs, tokens)
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, len(tokens))
	for i := range out {
		out[i] = mustLogits(t, p, i)
	}
	return out
}

// assertLogits fails unless got and want agree to tol relative to want's largest |logit|.
func assertLogits(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	scale := 0.0
	for _, w := range want {
		scale = math.Max(scale, math.Abs(w))
	}
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*scale) {
			t.Fatalf("%s: logit %d is %.17g, the program's %.17g (|diff| %.3g, scale %.3g)", what, i, got[i], want[i], d, scale)
		}
	}
}

// The decoder's logits at every position, after a prefill of any length and the steps
// after it, are the Sample program's, for every architecture and LayerNorm placement.
func TestDecoderMatchesTheSampleProgram(t *testing.T) {
	for k, v := range decoderVariants() {
		t.Run(v.name, func(t *testing.T) {
			m := perturbed(t, v.cfg, uint64(20+k))
			p := mustProgram(t, m, Sample, 1)
			tokens := randomTokens(uint64(k), v.cfg.Context, v.cfg.Vocab)
			want := programLogits(t, p, tokens)
			d, err := m.NewDecoder()
			if err != nil {
				t.Fatal(err)
			}
			for pre := 1; pre <= len(tokens); pre++ {
				got, err := d.Prefill(tokens[:pre])
				if err != nil {
					t.Fatal(err)
				}
				assertLogits(t, v.name+" prefill", got, want[pre-1], 1e-9)
				for i := pre; i < len(tokens); i++ {
					if got, err = d.Step(tokens[i]); err != nil {
						t.Fatal(err)
					}
					assertLogits(t, v.name+" step", got, want[i], 1e-9)
				}
				if d.Len() != len(tokens) {
					t.Fatalf("%d positions cached, want %d", d.Len(), len(tokens))
				}
			}
		})
	}
}

// The float32 decoder computes what the float32 program does, to float32 rounding: in the
// tiny configurations after a prefill of 2, and with heads 16 wide and a context of 20
// after a prefill of 9 (every attention kernel on its vector path: the row kernels,
// softmax rows of more than 8; prefill products of a full 6-row tile and an edge one).
func TestDecoderFloat32(t *testing.T) {
	type shape struct{ width, heads, context int }
	for _, c := range []struct {
		arch string
		shape
	}{{"dp", shape{}}, {"invertible-l2", shape{}}, {"dp", shape{32, 2, 20}}, {"l2", shape{32, 2, 20}}, {"l2-untied", shape{32, 2, 20}}, {"contractive-l2", shape{32, 2, 20}}} {
		cfg, arch, pre := tiny(c.arch), c.arch, 2
		if c.width > 0 {
			cfg.Width, cfg.Heads, cfg.Context, pre = c.width, c.heads, c.context, 9
			arch = fmt.Sprintf("%s (width %d, %d heads, context %d)", arch, c.width, c.heads, c.context)
		}
		m, err := perturbed(t, cfg, 7).WithDtype(spec.Float32)
		if err != nil {
			t.Fatal(err)
		}
		p := mustProgram(t, m, Sample, 1)
		tokens := randomTokens(3, m.Cfg.Context, m.Cfg.Vocab)
		want := programLogits(t, p, tokens)
		d, err := m.NewDecoder()
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Prefill(tokens[:pre])
		if err != nil {
			t.Fatal(err)
		}
		assertLogits(t, arch+" float32 prefill", got, want[pre-1], 1e-5)
		for i := pre; i < len(tokens); i++ {
			if got, err = d.Step(tokens[i]); err != nil {
				t.Fatal(err)
			}
			assertLogits(t, arch+" float32 step", got, want[i], 1e-5)
		}
		// a batch of three copies: every product has several rows, so the packed weights
		// (kernel.GemmPacked) compute them where the processor has the sgemm kernel
		bd, err := m.NewBatchDecoder(3)
		if err != nil {
			t.Fatal(err)
		}
		three := [][]int{tokens[:pre], tokens[:pre], tokens[:pre]}
		outs, err := bd.PrefillBatch(three)
		for i := pre; ; i++ {
			if err != nil {
				t.Fatal(err)
			}
			for s, got := range outs {
				assertLogits(t, fmt.Sprintf("%s float32 batch, sequence %d, position %d", arch, s, i-1), got, want[i-1], 1e-5)
			}
			if i == len(tokens) {
				break
			}
			outs, err = bd.StepBatch([]int{tokens[i], tokens[i], tokens[i]})
		}
	}
}

func TestDecoderRejectsBadInput(t *testing.T) {
	m, err := New(tiny("l2"), 1)
	if err != nil {
		t.Fatal(err)
	}
	d, err := m.NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Step(1); err == nil || !strings.Contains(err.Error(), "prefill first") {
		t.Errorf("step on an empty cache: %v", err)
	}
	for _, c := range []struct {
		tokens []int
		want   string
	}{
		{nil, "prefill of 0 tokens"},
		{[]int{1, 2, 3, 4, 5, 6}, "want 1..5"},
		{[]int{1, 7}, "token 7 at 1 is not in the vocabulary of 7"},
		{[]int{-1}, "token -1"},
	} {
		if _, err := d.Prefill(c.tokens); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("prefill %v: %v, want an error containing %q", c.tokens, err, c.want)
		}
	}
	if _, err := d.Prefill([]int{1, 2, 3, 4, 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Step(1); err == nil || !strings.Contains(err.Error(), "whole context") {
		t.Errorf("step on a full cache: %v", err)
	}
	if _, err := d.Prefill([]int{1}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Step(9); err == nil || !strings.Contains(err.Error(), "token 9") {
		t.Errorf("step with token 9: %v", err)
	}
	for _, c := range []struct {
		prompt []int
		s      Sampling
		rng    *rand.Rand
		want   string
	}{
		{[]int{1, 2, 3, 4, 5, 6}, Sampling{Window: Shift}, nil, "prompt of 6 tokens, want 1..5"},
		{nil, Sampling{Window: Shift}, nil, "prompt of 0 tokens"},
		{[]int{1}, Sampling{Window: "wrap"}, nil, `window policy "wrap", want shift or slide`},
		{[]int{1}, Sampling{Temperature: 1, Window: Slide}, nil, "random source"},
		{[]int{1}, Sampling{Temperature: -1, Window: Slide}, nil, "temperature -1"},
		{[]int{8}, Sampling{Window: Slide}, nil, "token 8"},
	} {
		if _, err := Generate(d, c.prompt, 3, c.s, c.rng); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("generate %v %+v: %v, want an error containing %q", c.prompt, c.s, err, c.want)
		}
	}
}

// windowGenerate is sampling without a cache, a Sample program run on the whole window for
// every token (Generate before the decoder): with shift, the window restarts from the last
// T/2 bytes and the new one when it would exceed T; with slide it is the last T bytes.
func windowGenerate(t *testing.T, p *Program, prompt []int, n int, s Sampling, rng *rand.Rand) []int {
	t.Helper()
	ctx := len(p.Inputs)
	seq, start := slices.Clone(prompt), 0
	for range n {
		window := seq[start:]
		seq = append(seq, pick(programLogits(t, p, window)[len(window)-1], s.Temperature, s.TopK, draw(rng, s.Temperature)))
		switch {
		case s.Window == Slide:
			start = max(0, len(seq)-ctx)
		case len(seq)-start > ctx:
			start = len(seq) - 1 - ctx/2
		}
	}
	return seq[len(prompt):]
}

// Generating with the cache draws the same tokens as running the program on the window of
// each policy, for the same seed: with slide, the old full-window sampling.
func TestGenerateMatchesFullWindowSampling(t *testing.T) {
	for k, v := range variants() {
		m, err := New(v.cfg, uint64(40+k))
		if err != nil {
			t.Fatal(err)
		}
		p := mustProgram(t, m, Sample, 1)
		d, err := m.NewDecoder()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []Window{Slide, Shift} {
			for _, prompt := range [][]int{{3}, randomTokens(uint64(k), v.cfg.Context, v.cfg.Vocab)} {
				for _, s := range []Sampling{{Temperature: 0.8, TopK: 4, Window: w}, {Window: w}, {Temperature: 1.5, Window: w}} {
					const n = 23
					got, err := Generate(d, prompt, n, s, rand.New(rand.NewPCG(uint64(k), 5)))
					if err != nil {
						t.Fatal(err)
					}
					want := windowGenerate(t, p, prompt, n, s, rand.New(rand.NewPCG(uint64(k), 5)))
					if !slices.Equal(got, want) {
						t.Fatalf("%s %+v prompt %v: decoder drew %v, full windows %v", v.name, s, prompt, got, want)
					}
				}
			}
		}
	}
}
