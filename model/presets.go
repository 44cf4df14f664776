package model

import (
	"fmt"
	"lipformer/spec"
	"math/rand/v2"
	"strings"
)

// Preset is a reference configuration of the benchmarks: a model shape and a batch size.
type Preset struct {
	Name    string `json:"name"`
	Layers  int    `json:"layers"`
	Heads   int    `json:"heads"`
	Width   int    `json:"width"`   // D
	Hidden  int    `json:"hidden"`  // MLP width
	Context int    `json:"context"` // T
	Vocab   int    `json:"vocab"`   // V
	Batch   int    `json:"batch"`   // B
	About   string `json:"about"`
}

// Presets returns the reference configurations, in order. bench/torch_ref.py holds the same
// table (TestTorchPresetsMatch checks it).
//   - P1: one pre-LN block at docs/gorgonia.md's speed measurement (11.3 GFLOP per step
//     there, with Gorgonia's own ops, which compute all of the causal T x T; CountFLOPs).
//   - P2: nanoGPT's CPU example for Tiny Shakespeare (its vocabulary of 65 bytes).
//   - P3: a deeper, longer-context model; batch 8 keeps B*T = 2048 rows, as in P1.
//   - tiny: a toy for tests and quick checks, not a measurement.
func Presets() []Preset {
	return []Preset{
		{Name: "P1", Layers: 1, Heads: 4, Width: 256, Hidden: 1024, Context: 128, Vocab: 256, Batch: 16,
			About: "one pre-LN block, as docs/gorgonia.md's speed reference"},
		{Name: "P2", Layers: 4, Heads: 4, Width: 128, Hidden: 512, Context: 64, Vocab: 65, Batch: 12,
			About: "nanoGPT's CPU example (shakespeare_char, n_layer 4, n_head 4, n_embd 128, block 64, batch 12)"},
		{Name: "P3", Layers: 6, Heads: 4, Width: 256, Hidden: 1024, Context: 256, Vocab: 256, Batch: 8,
			About: "6 layers, context 256; batch 8 (B*T = 2048 rows, as P1)"},
		{Name: "tiny", Layers: 2, Heads: 2, Width: 16, Hidden: 64, Context: 16, Vocab: 32, Batch: 4,
			About: "a toy for tests"},
	}
}

// FindPresets resolves a comma-separated list of preset names, in any case.
func FindPresets(list string) ([]Preset, error) {
	all := Presets()
	var names []string
	for _, p := range all {
		names = append(names, p.Name)
	}
	var out []Preset
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, p := range all {
			if strings.EqualFold(p.Name, name) {
				out, found = append(out, p), true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown configuration %q, want some of %s", name, strings.Join(names, ", "))
		}
	}
	return out, nil
}

// Config is the model configuration of the preset for an architecture and dtype; the
// fields a preset does not set (norm placement, Lipschitz coefficient, initial scale,
// weight tying) are Default's, and dropout is off.
func (p Preset) Config(arch spec.Arch, dtype spec.Dtype) Config {
	c := Default()
	c.Arch, c.Layers, c.Heads, c.Width, c.Hidden, c.Context, c.Vocab, c.Dtype = arch, p.Layers, p.Heads, p.Width, p.Hidden, p.Context, p.Vocab, dtype
	c.Dropout = 0
	return c
}

// RandomBatch is the deterministic batch the presets are measured on: B sequences of T
// tokens, rows of a random token stream drawn from seed, the targets the inputs shifted by
// one. Both are (B*T), row-major (B, T).
func RandomBatch(seed uint64, batch, context, vocab int) (inputs, targets []int) {
	rng := rand.New(rand.NewPCG(seed, 0x62656e6368)) // "bench"
	inputs, targets = make([]int, batch*context), make([]int, batch*context)
	for b := 0; b < batch; b++ {
		prev := rng.IntN(vocab)
		for t := 0; t < context; t++ {
			next := rng.IntN(vocab)
			inputs[b*context+t], targets[b*context+t] = prev, next
			prev = next
		}
	}
	return inputs, targets
}
