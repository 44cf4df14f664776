package model

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"lipformer/kernel"
	"lipformer/spec"
)

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

// In float32, a batch decoder of distinct sequences gives each sequence the logits of a
// one-sequence decoder, to float32 rounding, and the same logits bit for bit whether it
// runs them in one lane on one core (GOMAXPROCS 1), in lanes of one and two sequences (2:
// kernel.GemmPackedSerial on one and two rows) or in one lane split across the cores (4, more
// cores than sequences: kernel.GemmPacked by columns, attention by kernel.ParallelFor).
func TestBatchDecoderFloat32(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for k, arch := range []string{"dp", "l2", "invertible-l2"} {
		var first [][]float64 // every sequence's logits after every position, at GOMAXPROCS 1
		for _, procs := range []int{1, 2, 4} {
			runtime.GOMAXPROCS(procs)
			got := batchDecoderFloat32(t, arch, uint64(70+k))
			if first == nil {
				first = got
				continue
			}
			for i := range got {
				if !slices.Equal(got[i], first[i]) {
					t.Fatalf("%s at GOMAXPROCS %d: logits %d are %v, at 1 %v", arch, procs, i, got[i], first[i])
				}
			}
		}
	}
}

// batchDecoderFloat32 checks a float32 batch decoder of three distinct sequences of arch
// against one-sequence decoders at the current GOMAXPROCS and returns its logits, every
// sequence's after every position.
func batchDecoderFloat32(t *testing.T, arch string, seed uint64) [][]float64 {
	t.Helper()
	c := tiny(arch)
	c.Layers, c.Width, c.Context, c.Vocab = 1, 32, 32, 11
	m, err := perturbed(t, c, seed).WithDtype(spec.Float32)
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
	var all [][]float64
	outs, err := bd.PrefillBatch(prompts)
	for i := prompt; ; i++ {
		if err != nil {
			t.Fatal(err)
		}
		for s, got := range outs {
			assertLogits(t, fmt.Sprintf("%s sequence %d after position %d", arch, s, i-1), got, want[s][i-prompt], 1e-5)
		}
		all = append(all, outs...)
		if i == c.Context {
			break
		}
		outs, err = bd.StepBatch([]int{seqs[0][i], seqs[1][i], seqs[2][i]})
	}
	return all
}

// GenerateBatch with distinct prompts and greedy decoding gives every sequence Generate's
// continuation of its prompt, beyond the context too.
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
	prompts := [][]int{{1, 4}, {0, 6}, {3, 3}}
	for _, w := range []Window{Shift, Slide} {
		const n = 17 // beyond the context of 5
		s := Sampling{Window: w}
		got, err := GenerateBatch(three, prompts, n, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range got {
			alone, err := Generate(one, prompts[i], n, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(g, alone) {
				t.Errorf("%s: greedy sequence %d of 3 (prompt %v): %v, Generate %v", w, i, prompts[i], g, alone)
			}
		}
	}
}

// GenerateBatch of 64 sequences over 256 bytes, whose picks run on two goroutines, draws
// what picking sequence by sequence with one uniform each from the same source draws, with
// and without top-k, beyond the context too.
func TestGenerateBatchDrawsInSequenceOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	c := tiny("dp")
	c.Vocab, c.Context = 256, 6
	m, err := New(c, 4)
	if err != nil {
		t.Fatal(err)
	}
	const k, n = 64, 9
	if w := kernel.Workers(k, pickCost*c.Vocab); w < 2 {
		t.Fatalf("the picks run on %d goroutine: the test needs several", w)
	}
	prompts := make([][]int, k)
	for i := range prompts {
		prompts[i] = randomTokens(uint64(i), 2, c.Vocab)
	}
	for _, s := range []Sampling{{Temperature: 1.3, Window: Shift}, {Temperature: 0.8, TopK: 5, Window: Shift}} {
		d, err := m.NewBatchDecoder(k)
		if err != nil {
			t.Fatal(err)
		}
		got, err := GenerateBatch(d, prompts, n, s, rand.New(rand.NewPCG(5, 6)))
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(5, 6))
		seqs := make([][]int, k)
		for i := range seqs {
			seqs[i] = slices.Clone(prompts[i])
		}
		logits, err := d.PrefillBatch(prompts)
		for step := 0; ; step++ {
			if err != nil {
				t.Fatal(err)
			}
			for i := range seqs {
				seqs[i] = append(seqs[i], pick(logits[i], s.Temperature, s.TopK, rng.Float64()))
			}
			if step == n-1 {
				break
			}
			logits, err = advance(d, seqs, s.Window)
		}
		for i := range seqs {
			if !slices.Equal(got[i], seqs[i][2:]) {
				t.Fatalf("%+v: sequence %d drew %v, sequentially %v", s, i, got[i], seqs[i][2:])
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
