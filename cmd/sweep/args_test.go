package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lipformer/internal/clitest"
)

// TestHelpAndExtraArguments: -h and -help print the usage alone, and positional arguments
// are refused with the message every program gives.
func TestHelpAndExtraArguments(t *testing.T) {
	clitest.HelpAndExtraArguments(t, "sweep", "archs", []string{"-archs", "dp"}, func(args []string, stdout, stderr io.Writer) error {
		return run(context.Background(), args, stdout, stderr)
	})
}

// TestConfigFile: -config reads a configs/*.toml file as cmd/train does; its arch, layers,
// norm and seed become one-value grids unless the grid flag is on the command line, and
// the other settings are the shared ones, which the command line overrides.
func TestConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.toml")
	text := "arch = \"dp\"\nlayers = 3\nnorm = \"post\"\nseed = 7\nwidth = 48\nsteps = 40\nlr = 0.002\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, opt, o, err := parseFlags([]string{"-config", path, "-seeds", "1,2", "-lr", "0.003"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Width != 48 || opt.Steps != 40 || opt.LR != 0.003 {
		t.Errorf("width %d, steps %d, lr %g; want 48 and 40 from the file, 0.003 from the command line", cfg.Width, opt.Steps, opt.LR)
	}
	g := o.grid
	if len(g.Archs) != 1 || g.Archs[0].String() != "dp" || !slices.Equal(g.Depths, []int{3}) ||
		len(g.Norms) != 1 || g.Norms[0].String() != "post" || !slices.Equal(g.Seeds, []uint64{1, 2}) {
		t.Errorf("grid %+v; want dp, 3 layers, post from the file and seeds 1,2 from the command line", g)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("resume = \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := parseFlags([]string{"-config", bad}, io.Discard); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a config setting resume: error %v, want one naming the file", err)
	}
}
