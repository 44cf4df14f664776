package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"lipformer/bench"
	"lipformer/internal/clitest"
	"lipformer/model"
	"lipformer/ops"
	"lipformer/spec"
)

// TestHelpAndExtraArguments: -h and -help print the usage alone, and positional arguments
// are refused with the message every program gives.
func TestHelpAndExtraArguments(t *testing.T) {
	clitest.HelpAndExtraArguments(t, "bench", "configs", []string{"-configs", "P1"}, func(args []string, stdout, stderr io.Writer) error {
		return run(context.Background(), args, stdout, stderr)
	})
}

// TestDeprecatedNames: -o, -steps and -warmup, the names bench/compare.sh and the commands
// recorded in docs/bench once used, still set -out, -reps and -warmup-reps.
func TestDeprecatedNames(t *testing.T) {
	o, err := parseFlags([]string{"-o", "r.jsonl", "-steps", "3", "-warmup", "1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.out != "r.jsonl" || o.plan.Set.Steps != 3 || o.plan.Set.Warmup != 1 {
		t.Errorf("out %q, reps %d, warm-up reps %d; want r.jsonl, 3, 1", o.out, o.plan.Set.Steps, o.plan.Set.Warmup)
	}
}

// TestRecipeFlag: -recipe sets the plan's recipe setting, -muon its Muon scale, -mix
// its taps and -activation the invertible MLPs' activation, with -torch too; a negative
// -mix, an unknown activation, and MLP sub-blocks that are negative or do not divide a
// configuration's MLP width are refused by name.
func TestRecipeFlag(t *testing.T) {
	for _, args := range [][]string{{"-recipe", "-muon", "3", "-mix", "4", "-activation", "maxmin"}, {"-recipe", "-torch", "-muon", "3", "-mix", "4", "-activation", "maxmin"}} {
		o, err := parseFlags(args, io.Discard)
		if err != nil || !o.plan.Set.Recipe || o.plan.Set.Muon != 3 || o.plan.Set.Mix != 4 || o.plan.Set.Activation != "maxmin" {
			t.Errorf("%v: %v, recipe %v, muon %v, mix %v, activation %q", args, err, o.plan.Set.Recipe, o.plan.Set.Muon, o.plan.Set.Mix, o.plan.Set.Activation)
		}
	}
	if _, err := parseFlags([]string{"-activation", "relu"}, io.Discard); err == nil || !strings.Contains(err.Error(), "-activation") {
		t.Errorf("-activation relu: %v, want an error naming -activation", err)
	}
	if _, err := parseFlags([]string{"-mix", "-1"}, io.Discard); err == nil || !strings.Contains(err.Error(), "-mix") {
		t.Errorf("-mix -1: %v, want an error naming -mix", err)
	}
	if o, err := parseFlags([]string{"-mlp-blocks", "4"}, io.Discard); err != nil || o.plan.Set.MLPBlocks != 4 {
		t.Errorf("-mlp-blocks 4: %v, sub-blocks %d", err, o.plan.Set.MLPBlocks)
	}
	for _, args := range [][]string{{"-mlp-blocks", "-1"}, {"-configs", "P2", "-mlp-blocks", "3"}} {
		if _, err := parseFlags(args, io.Discard); err == nil || !strings.Contains(err.Error(), "-mlp-blocks") {
			t.Errorf("%v: %v, want an error naming -mlp-blocks", args, err)
		}
	}
}

// TestTokenBytesFlag: -token-bytes sets the plan's token bytes, and a negative count is
// refused by name; -ball sets the ball norms.
func TestTokenBytesFlag(t *testing.T) {
	if o, err := parseFlags([]string{"-ball"}, io.Discard); err != nil || !o.plan.Set.Ball {
		t.Errorf("-ball: %v, ball %v", err, o.plan.Set.Ball)
	}
	if o, err := parseFlags([]string{"-token-bytes", "3"}, io.Discard); err != nil || o.plan.Set.TokenBytes != 3 {
		t.Errorf("-token-bytes 3: %v, token bytes %d", err, o.plan.Set.TokenBytes)
	}
	if _, err := parseFlags([]string{"-token-bytes", "-2"}, io.Discard); err == nil || !strings.Contains(err.Error(), "-token-bytes") {
		t.Errorf("-token-bytes -2: %v, want an error naming -token-bytes", err)
	}
}

// TestL2BoundFlag: -l2-bound sets the plan's bound, names it in the measurements of the
// contractive architectures only, and is refused by name with -recipe or when unknown.
func TestL2BoundFlag(t *testing.T) {
	o, err := parseFlags([]string{"-l2-bound", "product"}, io.Discard)
	if err != nil || o.plan.Set.L2Bound != ops.BoundProduct {
		t.Fatalf("-l2-bound product: %v, bound %v", err, o.plan.Set.L2Bound)
	}
	p, err := model.FindPresets("tiny")
	if err != nil {
		t.Fatal(err)
	}
	for arch, want := range map[spec.Arch]string{spec.ContractiveL2: "contractive-l2+product", spec.InvertibleL2: "invertible-l2+product", spec.L2: "l2", spec.DP: "dp"} {
		j := bench.NewJob(p[0], arch, o.plan.Set)
		if j.ArchName() != want || (arch.TiedL2() && arch != spec.L2) != (j.Cfg.L2Bound == ops.BoundProduct) {
			t.Errorf("%v: named %s with bound %v, want %s", arch, j.ArchName(), j.Cfg.L2Bound, want)
		}
	}
	for _, args := range [][]string{{"-recipe", "-l2-bound", "product"}, {"-l2-bound", "spectral"}} {
		if _, err := parseFlags(args, io.Discard); err == nil || !strings.Contains(err.Error(), "l2-bound") {
			t.Errorf("%v: %v, want an error naming -l2-bound", args, err)
		}
	}
}

// TestLipKFlag: -lip-k and -embed-radius set the plan's bound end to end with -recipe, and
// are refused by name without it, negative, or -embed-radius without -lip-k.
func TestLipKFlag(t *testing.T) {
	o, err := parseFlags([]string{"-recipe", "-lip-k", "10", "-embed-radius", "1"}, io.Discard)
	if err != nil || o.plan.Set.LipK != 10 || o.plan.Set.EmbedRadius != 1 {
		t.Errorf("-recipe -lip-k 10 -embed-radius 1: %v, lip-k %v, embed radius %v", err, o.plan.Set.LipK, o.plan.Set.EmbedRadius)
	}
	for _, args := range [][]string{{"-lip-k", "10"}, {"-recipe", "-lip-k", "-1"}, {"-recipe", "-embed-radius", "1"}, {"-recipe", "-lip-k", "10", "-embed-radius", "-1"}} {
		if _, err := parseFlags(args, io.Discard); err == nil || !strings.Contains(err.Error(), "-lip-k") {
			t.Errorf("%v: %v, want an error naming -lip-k", args, err)
		}
	}
}
