package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"lipformer/spec"
	"lipformer/sweep"
)

// parseGrid reads -archs, -depths, -norms and -seeds.
func parseGrid(archs, depths, norms, seeds string) (sweep.Grid, error) {
	var g sweep.Grid
	var err error
	if g.Archs, err = parseList("archs", archs, spec.ParseArch); err != nil {
		return g, err
	}
	if g.Depths, err = parseList("depths", depths, func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("%q is not a number of layers (a positive integer)", s)
		}
		return n, nil
	}); err != nil {
		return g, err
	}
	if g.Norms, err = parseList("norms", norms, spec.ParseNorm); err != nil {
		return g, err
	}
	g.Seeds, err = parseList("seeds", seeds, func(s string) (uint64, error) {
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
