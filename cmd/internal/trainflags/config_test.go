package trainflags

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lipformer/model"
	"lipformer/spec"
	"lipformer/train"
)

// parse registers the train flags and -config on a new flag set and parses args as train
// does: the config file first, then the command line.
func parse(t *testing.T, args ...string) (model.Config, train.Options, *flag.FlagSet, error) {
	t.Helper()
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg, opt := model.Default(), train.DefaultOptions()
	Add(fs, &cfg, &opt)
	AddConfig(fs)
	if err := ApplyConfig(fs, args); err != nil {
		return cfg, opt, fs, err
	}
	err := fs.Parse(args)
	Finish(fs, &opt)
	return cfg, opt, fs, err
}

// writeConfig writes a config file into a temporary directory and returns its path.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The command line overrides the file whichever comes first, and the file's settings
// count as given.
func TestConfigThenFlags(t *testing.T) {
	path := writeConfig(t, "arch = \"dp\"\nsteps = 40\nlr = 3e-4\ntie = true\nwarmup = 7 # a reason\n")
	for _, args := range [][]string{{"-config", path, "-steps", "9"}, {"-steps", "9", "-config=" + path}} {
		cfg, opt, fs, err := parse(t, args...)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if cfg.Arch != spec.DP || !cfg.Tie || opt.Steps != 9 || opt.LR != 3e-4 || opt.Warmup != 7 {
			t.Errorf("%q: arch %s, tie %t, steps %d, lr %g, warmup %d; want dp, true, 9, 3e-4, 7", args, cfg.Arch, cfg.Tie, opt.Steps, opt.LR, opt.Warmup)
		}
		if !Given(fs, "lr") || Given(fs, "width") {
			t.Errorf("%q: lr given %t (want true), width given %t (want false)", args, Given(fs, "lr"), Given(fs, "width"))
		}
	}
}

// Bad files are refused with an error naming the file and the key.
func TestConfigErrorsNameFileAndKey(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"stpes = 3\n", `unknown setting "stpes"`},
		{"resume = \"x\"\n", `"resume" cannot be set`},
		{"layers = [1, 2]\n", "layers: value"},
		{"layers = \"four\"\n", "layers = four"},
		{"layers = 4\nlayers = 5\n", "layers"},
		{"layers = \n", "c.toml"},
	} {
		path := writeConfig(t, c.text)
		_, _, _, err := parse(t, "-config", path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%q: error %v, want one naming %s and %q", c.text, err, path, c.want)
		}
	}
	if _, _, _, err := parse(t, "-config", filepath.Join(t.TempDir(), "absent.toml")); err == nil || !strings.Contains(err.Error(), "absent.toml") {
		t.Errorf("absent file: error %v", err)
	}
	if _, _, _, err := parse(t, "-config"); err == nil {
		t.Error("-config without a file: no error")
	}
}

// Each named config sets exactly what its experiment's command line sets.
func TestConfigsAreTheirCommandLines(t *testing.T) {
	for name, line := range map[string]string{
		"shakespeare.toml": "-data shakespeare -layers 4 -heads 4 -width 128 -ctx 64 -batch 12 -steps 2000 -lr 1e-3 " +
			"-min-lr 1e-4 -warmup 100 -schedule cosine -beta2 0.99 -dropout 0 -eval-every 250 -eval-bytes 0 -seed 1",
		"shakespeare_k10.toml": "-data shakespeare -arch invertible-l2 -lip-k 10 -lip-c 0.25 -embed-std 1 -layers 4 -heads 4 -width 128 -ctx 64 " +
			"-batch 12 -steps 2000 -lr 1e-3 -min-lr 1e-4 -warmup 100 -schedule cosine -beta2 0.99 -dropout 0 -eval-every 250 -eval-bytes 0 -seed 1",
		"shakespeare_k10_unit.toml": "-data shakespeare -arch invertible-l2 -lip-k 10 -lip-c 0.25 -embed-radius 1 -embed-std 0.1 -layers 4 -heads 4 -width 128 -ctx 64 " +
			"-batch 12 -steps 2000 -lr 1e-3 -muon 20 -min-lr 1e-4 -warmup 100 -schedule cosine -beta2 0.99 -dropout 0 -eval-every 250 -eval-bytes 0 -seed 1",
		"shakespeare_k10_mix.toml": "-data shakespeare -arch invertible-l2 -lip-k 10 -lip-c 0.5 -embed-radius 1 -embed-std 0.1 -layers 1 -mix 16 -heads 4 -width 128 -ctx 64 " +
			"-batch 12 -steps 2000 -lr 1e-3 -muon 20 -min-lr 1e-4 -warmup 100 -schedule cosine -beta2 0.99 -dropout 0 -eval-every 250 -eval-bytes 0 -seed 1",
		"shakespeare_k10_maxmin.toml": "-data shakespeare -arch invertible-l2 -lip-k 10 -lip-c 0.5 -embed-radius 1 -embed-std 0.1 -layers 1 -mix 16 -activation maxmin -heads 4 -width 128 -ctx 64 " +
			"-batch 12 -steps 2000 -lr 1e-3 -muon 20 -min-lr 1e-4 -warmup 100 -schedule cosine -beta2 0.99 -dropout 0 -eval-every 250 -eval-bytes 0 -seed 1",
		"shakespeare_k10_pairs.toml": "-data shakespeare -arch invertible-l2 -lip-k 10 -lip-c 0.1 -embed-radius 1 -embed-std 0.1 -token-bytes 2 -layers 1 -activation maxmin -heads 4 -width 128 -ctx 64 " +
			"-batch 12 -steps 2000 -lr 3e-3 -muon 6.6667 -min-lr 3e-4 -warmup 100 -schedule cosine -beta2 0.99 -dropout 0 -eval-every 250 -eval-bytes 0 -seed 1",
		"shakespeare_k10_triples.toml": "-data shakespeare -arch invertible-l2 -lip-k 10 -lip-c 0.1 -embed-radius 1 -embed-std 0.1 -token-bytes 3 -layers 1 -activation maxmin -heads 4 -width 128 -ctx 64 " +
			"-batch 12 -steps 2000 -lr 3e-3 -muon 6.6667 -min-lr 3e-4 -warmup 100 -schedule cosine -beta2 0.99 -dropout 0 -eval-every 250 -eval-bytes 0 -seed 1",
		"shakespeare_inv.toml": "-data shakespeare -arch invertible-l2 -layers 8 -mlp-blocks 4 -hidden 64 -lip-c 0.97 -heads 4 -width 128 -ctx 64 " +
			"-batch 12 -steps 2000 -lr 3e-3 -min-lr 3e-4 -warmup 100 -schedule cosine -beta2 0.99 -dropout 0 -eval-every 250 -eval-bytes 0 -seed 1",
		"shakespeare_inv_wall.toml": "-data shakespeare -arch invertible-l2 -layers 6 -mlp-blocks 4 -hidden 48 -lip-c 0.97 -heads 4 -width 96 -ctx 64 " +
			"-batch 12 -steps 1890 -lr 3e-3 -min-lr 3e-4 -warmup 100 -schedule cosine -beta2 0.99 -dropout 0 -eval-every 250 -eval-bytes 0 -seed 1",
		"enwik7_inv_wall.toml": "-arch invertible-l2 -layers 6 -mlp-blocks 4 -hidden 48 -lip-c 0.97 -heads 4 -width 96 -ctx 64 -batch 16 -steps 1000 " +
			"-lr 3e-3 -min-lr 3e-4 -warmup 100 -schedule cosine -beta2 0.99 -eval-every 250 -eval-bytes 100000 -seed 1",
		"shakespeare_inv_muon.toml": "-data shakespeare -arch invertible-l2 -layers 6 -mlp-blocks 4 -hidden 48 -lip-c 0.97 -heads 4 -width 96 -ctx 64 " +
			"-batch 12 -steps 1800 -lr 3e-3 -muon 3.3 -min-lr 3e-4 -warmup 100 -schedule cosine -beta2 0.99 -dropout 0 -eval-every 250 -eval-bytes 0 -seed 1",
		"enwik7_inv_muon.toml": "-arch invertible-l2 -layers 6 -mlp-blocks 4 -hidden 48 -lip-c 0.97 -heads 4 -width 96 -ctx 64 -batch 16 -steps 920 " +
			"-lr 3e-3 -muon 6.7 -min-lr 3e-4 -warmup 100 -schedule cosine -beta2 0.99 -eval-every 250 -eval-bytes 100000 -seed 1",
		"shakespeare_inv_mix.toml": "-data shakespeare -arch invertible-l2 -layers 4 -mix 16 -mlp-blocks 4 -hidden 48 -lip-c 0.97 -heads 4 -width 96 -ctx 64 " +
			"-batch 12 -steps 2200 -lr 3e-3 -muon 3.3 -min-lr 3e-4 -warmup 100 -schedule cosine -beta2 0.99 -dropout 0 -eval-every 250 -eval-bytes 0 -seed 1",
		"shakespeare_inv_mix_w128.toml": "-data shakespeare -arch invertible-l2 -layers 4 -mix 16 -mlp-blocks 4 -hidden 64 -lip-c 0.97 -heads 4 -width 128 -ctx 64 " +
			"-batch 12 -steps 2250 -lr 3e-3 -muon 3.3 -min-lr 3e-4 -warmup 100 -schedule cosine -beta2 0.99 -dropout 0 -eval-every 250 -eval-bytes 0 -seed 1",
		"enwik7_inv_mix.toml": "-arch invertible-l2 -layers 4 -mix 16 -mlp-blocks 4 -hidden 48 -lip-c 0.97 -heads 4 -width 96 -ctx 64 -batch 16 -steps 1000 " +
			"-lr 3e-3 -muon 6.7 -min-lr 3e-4 -warmup 100 -schedule cosine -beta2 0.99 -eval-every 250 -eval-bytes 100000 -seed 1",
		"enwik7_inv_mix_w128.toml": "-arch invertible-l2 -layers 4 -mix 16 -mlp-blocks 4 -hidden 64 -lip-c 0.97 -heads 4 -width 128 -ctx 64 -batch 16 -steps 1150 " +
			"-lr 3e-3 -muon 6.7 -min-lr 3e-4 -warmup 100 -schedule cosine -beta2 0.99 -eval-every 250 -eval-bytes 100000 -seed 1",
		"enwik7_inv_mix_w128_h128.toml": "-arch invertible-l2 -layers 4 -mix 16 -mlp-blocks 4 -hidden 128 -lip-c 0.97 -heads 4 -width 128 -ctx 64 -batch 16 -steps 1000 " +
			"-lr 3e-3 -muon 6.7 -min-lr 3e-4 -warmup 100 -schedule cosine -beta2 0.99 -eval-every 250 -eval-bytes 100000 -seed 1",
		"shakespeare_10k.toml": "-data shakespeare -layers 4 -heads 4 -width 128 -ctx 64 -batch 12 -steps 10000 -lr 1e-3 " +
			"-min-lr 1e-4 -warmup 100 -schedule cosine -beta2 0.99 -dropout 0 -eval-every 1000 -eval-bytes 0 -seed 1",
		"enwik7.toml": "-layers 4 -heads 4 -width 128 -ctx 64 -batch 16 -steps 1000 -lr 1e-3 -min-lr 1e-4 -warmup 100 " +
			"-schedule cosine -beta2 0.99 -eval-every 250 -eval-bytes 100000 -seed 1",
		"enwik8.toml": "-data enwik8 -layers 4 -heads 4 -width 128 -ctx 64 -batch 16 -steps 10000 -lr 1e-3 -min-lr 1e-4 -warmup 100 " +
			"-schedule cosine -beta2 0.99 -eval-every 1000 -eval-bytes 100000 -seed 1",
		"p1.toml": "-layers 1 -heads 4 -width 256 -hidden 1024 -ctx 128 -batch 16",
		"p2.toml": "-data shakespeare -layers 4 -heads 4 -width 128 -hidden 512 -ctx 64 -batch 12",
		"p3.toml": "-layers 6 -heads 4 -width 256 -hidden 1024 -ctx 256 -batch 8",
	} {
		wantCfg, wantOpt, _, err := parse(t, strings.Fields(line)...)
		if err != nil {
			t.Fatal(err)
		}
		cfg, opt, _, err := parse(t, "-config", filepath.Join("..", "..", "..", "configs", name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if cfg != wantCfg || opt != wantOpt {
			t.Errorf("%s:\n%+v %+v\nwant\n%+v %+v", name, cfg, opt, wantCfg, wantOpt)
		}
	}
}

// Every named config parses, and its model config and options are valid.
func TestEveryConfigIsValid(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "configs", "*.toml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no configs found: %v", err)
	}
	for _, f := range files {
		cfg, opt, _, err := parse(t, "-config", f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if err := cfg.BeforeCorpus().WithCertifiedRecipe().Validate(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		if err := opt.Validate(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
