package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// decoderVariants are variants() and the non-invertible attentions with post-LN and
// without LayerNorm.
func decoderVariants() []variant {
	vs := variants()
	for _, norm := range []string{"post", "none"} {
		for _, arch := range []string{"dp", "l2", "l2-untied", "contractive-l2"} {
			c := tiny(arch)
			c.Norm = norm
			vs = append(vs, variant{arch + "-" + norm, c})
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
		out[i] = p.Logits(i)
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

// The float32 decoder computes what the float32 program does, to float32 rounding.
func TestDecoderFloat32(t *testing.T) {
	for _, arch := range []string{"dp", "invertible-l2"} {
		m, err := perturbed(t, tiny(arch), 7).WithDtype("float32")
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
		got, err := d.Prefill(tokens[:2])
		if err != nil {
			t.Fatal(err)
		}
		assertLogits(t, arch+" float32 prefill", got, want[1], 1e-5)
		for i := 2; i < len(tokens); i++ {
			if got, err = d.Step(tokens[i]); err != nil {
				t.Fatal(err)
			}
			assertLogits(t, arch+" float32 step", got, want[i], 1e-5)
		}
		// a batch of three copies: every product has several rows, so the packed weights
		// (ops.GemmPacked) compute them where the processor has the sgemm kernel
		bd, err := m.NewBatchDecoder(3)
		if err != nil {
			t.Fatal(err)
		}
		three := [][]int{tokens[:2], tokens[:2], tokens[:2]}
		outs, err := bd.PrefillBatch(three)
		for i := 2; ; i++ {
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
		seq = append(seq, pick(programLogits(t, p, window)[len(window)-1], s.Temperature, s.TopK, rng))
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

// A batch decoder's logits for each sequence, through a prefill, steps and a prefill
// again, are those of a one-sequence decoder given that sequence alone.
func TestBatchDecoderMatchesOneSequenceDecoders(t *testing.T) {
	const b = 3
	for k, v := range decoderVariants() {
		t.Run(v.name, func(t *testing.T) {
			m := perturbed(t, v.cfg, uint64(60+k))
			bd, err := m.NewBatchDecoder(b)
			if err != nil {
				t.Fatal(err)
			}
			one, err := m.NewDecoder()
			if err != nil {
				t.Fatal(err)
			}
			ctx := v.cfg.Context
			seqs := make([][]int, b)
			for s := range seqs {
				seqs[s] = randomTokens(uint64(100*k+s), ctx, v.cfg.Vocab)
			}
			// prefill 2 tokens, step to the end, prefill 1 token again and step once
			type call struct{ from, to int }
			calls := []call{{0, 2}}
			for i := 2; i < ctx; i++ {
				calls = append(calls, call{i, i + 1})
			}
			calls = append(calls, call{0, 1}, call{1, 2})
			want := make([][][]float64, b) // sequence, call, logits
			for s, seq := range seqs {
				for _, c := range calls {
					var logits []float64
					if c.from == 0 {
						logits, err = one.Prefill(seq[:c.to])
					} else {
						logits, err = one.Step(seq[c.from])
					}
					if err != nil {
						t.Fatal(err)
					}
					want[s] = append(want[s], logits)
				}
			}
			for ci, c := range calls {
				var got [][]float64
				if c.from == 0 {
					prompts := make([][]int, b)
					for s, seq := range seqs {
						prompts[s] = seq[:c.to]
					}
					got, err = bd.PrefillBatch(prompts)
				} else {
					tokens := make([]int, b)
					for s, seq := range seqs {
						tokens[s] = seq[c.from]
					}
					got, err = bd.StepBatch(tokens)
				}
				if err != nil {
					t.Fatal(err)
				}
				for s := range seqs {
					assertLogits(t, fmt.Sprintf("sequence %d, positions %d..%d", s, c.from, c.to-1), got[s], want[s][ci], 1e-12)
				}
			}
		})
	}
}

// In float32, a batch decoder of distinct sequences (its products by ops.GemmPacked on the
// packed weights, its prefill's attention over the sequences on several goroutines) gives
// each sequence the logits of a one-sequence decoder, to float32 rounding.
func TestBatchDecoderFloat32(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0))))
	for k, arch := range []string{"dp", "l2", "invertible-l2"} {
		c := tiny(arch)
		c.Layers, c.Width, c.Context, c.Vocab = 1, 32, 32, 11
		m, err := perturbed(t, c, uint64(70+k)).WithDtype("float32")
		if err != nil {
			t.Fatal(err)
		}
		one, err := m.NewDecoder()
		if err != nil {
			t.Fatal(err)
		}
		const b, prompt = 3, 16
		seqs := make([][]int, b)
		want := make([][][]float64, b) // sequence, position, logits
		for s := range seqs {
			seqs[s] = randomTokens(uint64(200+s), c.Context, c.Vocab)
			logits, err := one.Prefill(seqs[s][:prompt])
			for i := prompt; ; i++ {
				if err != nil {
					t.Fatal(err)
				}
				want[s] = append(want[s], logits)
				if i == c.Context {
					break
				}
				logits, err = one.Step(seqs[s][i])
			}
		}
		bd, err := m.NewBatchDecoder(b)
		if err != nil {
			t.Fatal(err)
		}
		prompts := make([][]int, b)
		for s, seq := range seqs {
			prompts[s] = seq[:prompt]
		}
		outs, err := bd.PrefillBatch(prompts)
		for i := prompt; ; i++ {
			if err != nil {
				t.Fatal(err)
			}
			for s, got := range outs {
				assertLogits(t, fmt.Sprintf("%s sequence %d after position %d", arch, s, i-1), got, want[s][i-prompt], 1e-5)
			}
			if i == c.Context {
				break
			}
			outs, err = bd.StepBatch([]int{seqs[0][i], seqs[1][i], seqs[2][i]})
		}
	}
}

// GenerateBatch with one prompt draws what Generate draws, beyond the context too; with
// distinct prompts and greedy decoding every sequence is Generate's for its prompt.
func TestGenerateBatch(t *testing.T) {
	m, err := New(tiny("l2"), 9)
	if err != nil {
		t.Fatal(err)
	}
	one, err := m.NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	three, err := m.NewBatchDecoder(3)
	if err != nil {
		t.Fatal(err)
	}
	prompt := []int{1, 4}
	for _, s := range []Sampling{{Temperature: 1, Window: Shift}, {Temperature: 0.7, TopK: 3, Window: Slide}, {Window: Shift}} {
		const n = 17 // beyond the context of 5
		want, err := Generate(one, prompt, n, s, rand.New(rand.NewPCG(2, 3)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := GenerateBatch(one, [][]int{prompt}, n, s, rand.New(rand.NewPCG(2, 3)))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got[0], want) {
			t.Errorf("%+v: batch of one drew %v, Generate %v", s, got[0], want)
		}
		if s.Temperature != 0 {
			continue
		}
		prompts := [][]int{prompt, {0, 6}, {3, 3}}
		got, err = GenerateBatch(three, prompts, n, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range got {
			alone, err := Generate(one, prompts[i], n, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(g, alone) {
				t.Errorf("greedy sequence %d of 3 (prompt %v): %v, Generate %v", i, prompts[i], g, alone)
			}
		}
	}
}

func TestBatchDecoderRejectsBadInput(t *testing.T) {
	m, err := New(tiny("dp"), 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.NewBatchDecoder(0); err == nil || !strings.Contains(err.Error(), "batch of 0") {
		t.Errorf("batch of 0: %v", err)
	}
	d, err := m.NewBatchDecoder(2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Prefill([]int{1}); err == nil || !strings.Contains(err.Error(), "decoder of 2") {
		t.Errorf("one-sequence prefill on a batch decoder: %v", err)
	}
	for _, c := range []struct {
		prompts [][]int
		want    string
	}{
		{[][]int{{1}}, "prefill of 1 sequences, want the batch of 2"},
		{[][]int{{1, 2}, {1}}, "2 and 1 tokens"},
		{[][]int{{1, 2}, {1, 7}}, "token 7 at 1 of sequence 1"},
	} {
		if _, err := d.PrefillBatch(c.prompts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("prefill %v: %v, want an error containing %q", c.prompts, err, c.want)
		}
	}
	if _, err := d.PrefillBatch([][]int{{1}, {2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.StepBatch([]int{1}); err == nil || !strings.Contains(err.Error(), "want one per sequence") {
		t.Errorf("step of 1 token on 2 sequences: %v", err)
	}
	if _, err := GenerateBatch(d, [][]int{{1}, {2, 3}}, 2, Sampling{Window: Shift}, nil); err == nil || !strings.Contains(err.Error(), "equal lengths") {
		t.Errorf("generate from unequal prompts: %v", err)
	}
}

// pick draws each id with its softmax probability at the temperature, over all ids and
// over the top k: frequencies of 200000 draws within 5 standard errors.
func TestPickFrequencies(t *testing.T) {
	logits := []float64{0.5, 2, -1, 1.5, 2}
	rng := rand.New(rand.NewPCG(8, 9))
	for _, c := range []struct {
		temp float64
		topK int
	}{{1, 0}, {0.5, 0}, {2, 3}} {
		keep := []int{0, 1, 2, 3, 4}
		if c.topK > 0 {
			keep = []int{1, 4, 3} // descending logit, ties by id
		}
		p := make([]float64, len(logits))
		var z float64
		for _, id := range keep {
			p[id] = math.Exp(logits[id] / c.temp)
			z += p[id]
		}
		const draws = 200000
		count := make([]float64, len(logits))
		for range draws {
			count[pick(logits, c.temp, c.topK, rng)]++
		}
		for id := range p {
			p[id] /= z
			se := math.Sqrt(p[id] * (1 - p[id]) / draws)
			if f := count[id] / draws; math.Abs(f-p[id]) > 5*se+1e-12 {
				t.Errorf("temperature %g top-%d: id %d drawn %.4f of the time, want %.4f", c.temp, c.topK, id, f, p[id])
			}
		}
	}
}
