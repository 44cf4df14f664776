package main

import (
	"math"
	"reflect"
	"testing"

	"lipformer/model"
	"lipformer/ops"
	"lipformer/spec"
	"lipformer/train"
)

// known returns a run in dir with the default settings changed by edit.
func known(dir string, edit func(*model.Config, *train.Options)) *runInfo {
	cfg, opt := model.Default(), train.DefaultOptions()
	edit(&cfg, &opt)
	return &runInfo{dir: dir, cfg: &cfg, opt: &opt}
}

// TestLegendsNameTheDifferingSettings: every label begins with the run's name (its whole
// path when two runs share a base name) and follows with the settings that differ.
func TestLegendsNameTheDifferingSettings(t *testing.T) {
	same := func(*model.Config, *train.Options) {}
	runs := []*runInfo{
		known("out/a", func(c *model.Config, o *train.Options) { c.Arch, o.LR = spec.DP, 1e-3 }),
		known("out/b", func(c *model.Config, o *train.Options) { c.Arch, o.LR = spec.L2, 3e-4 }),
		known("out/c", func(c *model.Config, o *train.Options) { c.Arch, c.Hidden, o.LR = spec.L2, 4*c.Width, 3e-4 }),
		{dir: "out/d/"},
	}
	runs[0].metrics.Train = trainRows(3, math.NaN())
	want := []string{"a: dp lr=0.001 (diverged at step 1)", "b: l2 lr=0.0003", "c: l2 lr=0.0003", "d"}
	if got := legends(runs); !reflect.DeepEqual(got, want) {
		t.Errorf("legends %q, want %q", got, want)
	}
	runs = []*runInfo{known("x/run1", same), known("y/run2", same), {dir: "z/run3", nonFinite: true}, known("w/run2", same)}
	want = []string{"run1", "y/run2", "run3 (diverged)", "w/run2"}
	if got := legends(runs); !reflect.DeepEqual(got, want) {
		t.Errorf("legends of runs with the same settings %q, want %q", got, want)
	}
}

func TestLegendsLeaveOutSettingsAnArchitectureDoesNotUse(t *testing.T) {
	runs := []*runInfo{
		known("out/dp", func(c *model.Config, o *train.Options) { c.Arch = spec.DP }),
		known("out/inv", func(c *model.Config, o *train.Options) {
			c.Arch, c.Norm, c.L2Bound, c.L2Temp, c.MLPGain = spec.InvertibleL2, spec.NoLN, ops.BoundTok2, true, 256
		}),
		known("out/inv8", func(c *model.Config, o *train.Options) {
			c.Arch, c.Norm, c.L2Bound, c.L2Temp, c.MLPGain = spec.InvertibleL2, spec.NoLN, ops.BoundTok2, true, 8
		}),
	}
	want := []string{"dp: dp norm=pre", "inv: invertible-l2 norm=none mlp-gain=256", "inv8: invertible-l2 norm=none mlp-gain=8"}
	if got := legends(runs); !reflect.DeepEqual(got, want) {
		t.Errorf("legends %q, want %q", got, want)
	}
}

// A contractive run of the kim bound (the zero value, what a checkpoint without the key
// means) is named by it, not by an empty value.
func TestLegendsNameTheUnsetBoundKim(t *testing.T) {
	runs := []*runInfo{
		known("out/old", func(c *model.Config, o *train.Options) { c.Arch, c.L2Bound = spec.ContractiveL2, ops.BoundKim }),
		known("out/tok2", func(c *model.Config, o *train.Options) { c.Arch, c.L2Bound = spec.ContractiveL2, ops.BoundTok2 }),
	}
	want := []string{"old: l2-bound=kim", "tok2: l2-bound=token2"}
	if got := legends(runs); !reflect.DeepEqual(got, want) {
		t.Errorf("legends %q, want %q", got, want)
	}
}
