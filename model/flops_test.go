package model

import (
	"lipformer/spec"
	"math"
	"testing"
)

// TestCausalAreaHandCount checks the computed blocks of a causal attention map by hand.
// T = 5 in blocks of 2: rows 0-1 see columns 0-1 (4 entries), rows 2-3 columns 0-3 (8), row
// 4 all 5, so 17 of the 25 entries are computed, the 15 of the lower triangle and the two
// above the diagonal in the diagonal blocks. One block (T <= block) is the whole map; P1's
// T = 128 is two blocks of 64: 64*64 + 64*128.
func TestCausalAreaHandCount(t *testing.T) {
	for _, c := range []struct {
		t, block int
		want     float64
	}{{5, 2, 17}, {4, 2, 12}, {3, 64, 9}, {64, 64, 4096}, {128, 64, 12288}, {66, 64, 4096 + 2*66}} {
		if got := causalArea(c.t, c.block); got != c.want {
			t.Errorf("T %d in blocks of %d: %v entries, want %v", c.t, c.block, got, c.want)
		}
	}
}

// TestFLOPsHandCount checks CountFLOPs against a count by hand for one layer with B = 2,
// T = 3, D = 4, H = 2 (d = 2), F = 8, V = 5, so N = 6 rows, T within one block of the
// causal attention.
func TestFLOPsHandCount(t *testing.T) {
	cfg := Config{Layers: 1, Heads: 2, Width: 4, Hidden: 8, Context: 3, Vocab: 5}
	// dp: [q|k|v] 2*6*4*12 = 576; Q K^T and P V, 2 sequences x 2 heads x 2 products x
	// 2*3*3*2 = 288; W^O 2*6*4*4 = 192; MLP 2*6*4*8 twice = 768; head 2*6*4*5 = 240.
	dpForward := 576.0 + 288 + 192 + 768 + 240
	// l2: [q|v] 2*6*4*8 = 384; value weights 2 heads x (W^Q^T W^V, 2*4*2*2 = 32, and
	// W^Q (.), 32) = 128; the rest as dp.
	l2Forward := 384.0 + 128 + 288 + 192 + 768 + 240
	for _, c := range []struct {
		arch string
		fwd  float64
	}{
		{"dp", dpForward}, {"l2-untied", dpForward}, {"invertible-dp", dpForward},
		{"l2", l2Forward}, {"contractive-l2", l2Forward}, {"invertible-l2", l2Forward},
	} {
		cfg.Arch = mustArch(c.arch)
		got, err := CountFLOPs(cfg, 2)
		if err != nil {
			t.Fatal(err)
		}
		if got.Forward != c.fwd || got.Train != 3*c.fwd {
			t.Errorf("%s: forward %v and train %v FLOPs, want %v and %v", c.arch, got.Forward, got.Train, c.fwd, 3*c.fwd)
		}
	}
	// two layers double everything but the head; Hidden 0 means 4D = 16, twice the MLP
	cfg.Arch, cfg.Layers, cfg.Hidden = spec.DP, 2, 0
	got, err := CountFLOPs(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2*(dpForward-240+768) + 240; got.Forward != want {
		t.Errorf("two layers, hidden 4D: forward %v FLOPs, want %v", got.Forward, want)
	}
	// three MLP sub-blocks of width 8 in one invertible-l2 layer: the MLP's 768 three times
	cfg.Arch, cfg.Layers, cfg.Hidden, cfg.MLPBlocks = spec.InvertibleL2, 1, 8, 3
	if got, err = CountFLOPs(cfg, 2); err != nil {
		t.Fatal(err)
	}
	if want := l2Forward + 2*768; got.Forward != want {
		t.Errorf("three MLP sub-blocks: forward %v FLOPs, want %v", got.Forward, want)
	}
}

// TestFLOPsSkipMaskedBlocks checks CountFLOPs by hand where the causal attention has two
// blocks: one dp layer with B = 1, T = 66, D = 4, H = 2 (d = 2), F = 8, V = 5. The op
// computes rows 0-63 against columns 0-63 and rows 64-65 against columns 0-65: 64*64 +
// 2*66 = 4228 entries of the 66*66 = 4356, per sequence and head.
func TestFLOPsSkipMaskedBlocks(t *testing.T) {
	cfg := Config{Arch: spec.DP, Layers: 1, Heads: 2, Width: 4, Hidden: 8, Context: 66, Vocab: 5}
	// [q|k|v] 2*66*4*12 = 6336; Q K^T and P V, 2 heads x 2 products x 2*4228*2 = 67648 (the
	// full map would be 69696); W^O 2*66*4*4 = 2112; MLP 2*66*4*8 twice = 8448; head
	// 2*66*4*5 = 2640.
	want := 6336.0 + 67648 + 2112 + 8448 + 2640
	got, err := CountFLOPs(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Forward != want || got.Train != 3*want {
		t.Errorf("forward %v and train %v FLOPs, want %v and %v", got.Forward, got.Train, want, 3*want)
	}
}

// TestFillFLOPsHandCount checks CountFillFLOPs by hand for one layer with T = 3, D = 4,
// H = 2, F = 8, V = 5: a shift cycle (a prefill of P = T/2+1 = 2 positions and a step at
// m = 3), and a fill from one position.
func TestFillFLOPsHandCount(t *testing.T) {
	cfg := Config{Layers: 1, Heads: 2, Width: 4, Hidden: 8, Context: 3, Vocab: 5}
	// dp, per row: [q|k|v] 2*4*12 = 96, W^O 2*4*4 = 32, MLP 2*2*4*8 = 128: 256; head 2*4*5
	// = 40. Prefill: 2 rows 512, attention 4*2*2*4 = 64, head 40; step: 256 + 4*3*4 + 40.
	dp := 512.0 + 64 + 40 + 256 + 48 + 40
	// l2: the decoder projects by W^Q alone, 2*4*4 = 32 instead of 96 per row (its value
	// maps are folded into W^O once, not counted).
	l2 := dp - 3*64
	for arch, want := range map[string]float64{"dp": dp, "l2-untied": dp, "l2": l2, "invertible-l2": l2} {
		cfg.Arch = mustArch(arch)
		got, err := CountFillFLOPs(cfg, cfg.Context/2+1)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: %v FLOPs per shift cycle, want %v", arch, got, want)
		}
	}
	// a fill from a 1-position prompt: prefill 256 + 4*1*1*4 + 40, steps at m = 2 and 3
	cfg.Arch = spec.DP
	if got, err := CountFillFLOPs(cfg, 1); err != nil || got != 256+16+40+256+32+40+256+48+40 {
		t.Errorf("fill from 1 position: %v FLOPs (%v), want 984", got, err)
	}
}

// TestFLOPsPresets pins the training step's GFLOP of the presets (dp). P1 is 11.07: the
// 11.27 of the full causal T x T (docs/gorgonia.md's 11.3, measured with Gorgonia's own
// ops) less the quarter of the attention products above the block diagonal that the
// attention op skips; P2's T = 64 is one block, and P3 skips 3/8 of its attention.
func TestFLOPsPresets(t *testing.T) {
	for name, want := range map[string]float64{"P1": 11.07, "P2": 3.964, "P3": 64.83} {
		p, err := FindPresets(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := CountFLOPs(p[0].Config(spec.DP, spec.Float32), p[0].Batch)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.Train/1e9-want) > 0.005*want {
			t.Errorf("%s training step: %.4g GFLOP, want %.4g", name, got.Train/1e9, want)
		}
	}
}

func TestFLOPsErrors(t *testing.T) {
	good := Config{Arch: spec.DP, Layers: 1, Heads: 2, Width: 4, Context: 3, Vocab: 5}
	for name, c := range map[string]func(*Config) int{
		"unset arch": func(c *Config) int { c.Arch = 0; return 1 },
		"heads":      func(c *Config) int { c.Heads = 3; return 1 },
		"batch":      func(*Config) int { return 0 },
	} {
		cfg := good
		batch := c(&cfg)
		if _, err := CountFLOPs(cfg, batch); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
