package model

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
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
// one-sequence decoder, to float32 rounding, whether it runs them in one lane (GOMAXPROCS
// 1: its products by ops.GemmPacked, its attention by ops.ParallelFor), in lanes of one and
// two sequences (2: ops.GemmPackedSerial on two rows) or of one (4).
func TestBatchDecoderFloat32(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), batchDecoderFloat32)
	}
}

// batchDecoderFloat32 is TestBatchDecoderFloat32 at the current GOMAXPROCS.
func batchDecoderFloat32(t *testing.T) {
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
