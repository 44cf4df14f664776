package tightness

import (
	"fmt"

	"lipformer/lipschitz/search"
	"lipformer/ops"
)

// Weights and engines of a Config.
const (
	WeightsUnit   = "unit"   // every map the (D, D) identity
	WeightsRandom = "random" // N(0, 1/D) entries drawn from Search.Seed
	EngineAuto    = "auto"   // EngineScalar for D = H = 1, else EngineGraph
	EngineGraph   = "graph"  // the layer's Gorgonia graph (search.GraphMap)
	EngineScalar  = "scalar" // the closed-form D = H = 1 Jacobian (search.Scalar)
)

// Config is the experiment: one attention layer, the sequence lengths and box radii of
// its cells, and the search at each.
type Config struct {
	Kind       ops.AttentionKind
	Ns         []int     // sequence lengths N
	Radii      []float64 // box radii R of ||X||_inf <= R, each run at every N; 0 is no box
	Dim, Heads int       // width D and heads H (H divides D)
	Causal     bool
	Weights    string // WeightsUnit or WeightsRandom
	Engine     string // EngineAuto, EngineGraph or EngineScalar
	Workers    int    // goroutines sharing the starts (>= 1; the result does not depend on it)
	// Warm begins start 0 of each radius after the first at the previous radius's best
	// input, scaled to the box.
	Warm bool
	// NoConstruction skips the two-cluster inputs (about 70 Jacobians per cell, most of
	// the time of a short search on the graph at large N D).
	NoConstruction bool
	// Search is the search at every cell; its Radius and Init are set per cell.
	Search search.Options
}

// check validates the settings the search does not check itself.
func (c *Config) check() error {
	switch {
	case c.Weights != WeightsUnit && c.Weights != WeightsRandom:
		return fmt.Errorf("tightness: weights %q, want %s or %s", c.Weights, WeightsUnit, WeightsRandom)
	case c.Engine != EngineAuto && c.Engine != EngineGraph && c.Engine != EngineScalar:
		return fmt.Errorf("tightness: engine %q, want %s, %s or %s", c.Engine, EngineAuto, EngineGraph, EngineScalar)
	case c.Engine == EngineScalar && (c.Dim != 1 || c.Heads != 1):
		return fmt.Errorf("tightness: the scalar engine needs D = H = 1, got %d and %d", c.Dim, c.Heads)
	case c.Workers < 1:
		return fmt.Errorf("tightness: %d workers, want >= 1", c.Workers)
	}
	for _, r := range c.Radii {
		if c.Kind == ops.DotProduct && r == 0 {
			return fmt.Errorf("tightness: dot-product attention is not Lipschitz, its search needs a box (R > 0)")
		}
	}
	return nil
}

// useScalar reports whether the closed-form D = H = 1 Jacobian is used.
func (c *Config) useScalar() bool {
	return c.Engine == EngineScalar || (c.Engine == EngineAuto && c.Dim == 1 && c.Heads == 1)
}
