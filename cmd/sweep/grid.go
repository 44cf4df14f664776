package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"lipformer/layers"
	"lipformer/model"
	"lipformer/train"
)

// grid is the values the sweep crosses.
type grid struct {
	archs  []string
	depths []int
	norms  []string
	seeds  []uint64
}

// spec is one run of the sweep: the shared settings with its architecture, depth, norm
// placement and seed.
type spec struct {
	cfg model.Config
	opt train.Options
}

// name is the run's directory name, <arch>-L<depth>-<norm>-s<seed>.
func (s spec) name() string {
	return fmt.Sprintf("%s-L%d-%s-s%d", s.cfg.Arch, s.cfg.Layers, s.cfg.Norm, s.opt.Seed)
}

// specs returns the runs of the grid in the order they run and are tabulated: by
// architecture, then depth, norm placement and seed.
func (g grid) specs(cfg model.Config, opt train.Options) []spec {
	var out []spec
	for _, arch := range g.archs {
		for _, depth := range g.depths {
			for _, norm := range g.norms {
				for _, seed := range g.seeds {
					s := spec{cfg: cfg, opt: opt}
					s.cfg.Arch, s.cfg.Layers, s.cfg.Norm, s.opt.Seed = arch, depth, norm, seed
					s.cfg = s.cfg.WithCertifiedRecipe()
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// parseGrid reads -archs, -depths, -norms and -seeds.
func parseGrid(archs, depths, norms, seeds string) (grid, error) {
	var g grid
	var err error
	if g.archs, err = parseList("archs", archs, func(s string) (string, error) {
		if !slices.Contains(model.Architectures, s) {
			return "", fmt.Errorf("unknown architecture %q, want %s", s, strings.Join(model.Architectures, ", "))
		}
		return s, nil
	}); err != nil {
		return g, err
	}
	if g.depths, err = parseList("depths", depths, func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("%q is not a number of layers (a positive integer)", s)
		}
		return n, nil
	}); err != nil {
		return g, err
	}
	if g.norms, err = parseList("norms", norms, func(s string) (string, error) {
		n, err := layers.ParseNorm(s)
		return string(n), err
	}); err != nil {
		return g, err
	}
	g.seeds, err = parseList("seeds", seeds, func(s string) (uint64, error) {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a seed (a non-negative integer)", s)
		}
		return n, nil
	})
	return g, err
}

// parseList splits the comma-separated value of -flag and parses each element; empty
// lists and repeated values are errors.
func parseList[T comparable](flag, list string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, s := range strings.Split(list, ",") {
		v, err := parse(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("-%s: %w", flag, err)
		}
		if slices.Contains(out, v) {
			return nil, fmt.Errorf("-%s: %q is given twice", flag, strings.TrimSpace(s))
		}
		out = append(out, v)
	}
	return out, nil
}
