// Package sweep trains a grid of runs with shared settings, one after another, each into
// its own run directory, and tabulates their outcome: final, best and test bpc and the
// stability figures of docs/math.md, "The language model". It skips finished runs,
// resumes interrupted ones and restarts those that crashed before their first checkpoint
// (train.RunDir.Action), so the same sweep run again continues where it stopped.
package sweep

import (
	"fmt"
	"path/filepath"

	"lipformer/model"
	"lipformer/spec"
	"lipformer/train"
)

// Grid is the values a sweep crosses.
type Grid struct {
	Archs  []spec.Arch
	Depths []int
	Norms  []spec.Norm
	Seeds  []uint64
	// Recipe gives each run the certified recipe of its architecture
	// (spec.Model.WithCertifiedRecipe): what a sweep that names no bound does.
	Recipe bool
}

// Spec is one run of the sweep: the shared settings with its architecture, depth, norm
// placement and seed.
type Spec struct {
	Cfg model.Config
	Opt train.Options
}

// Name is the run's directory name, <arch>-L<depth>-<norm>-s<seed>.
func (s Spec) Name() string {
	return fmt.Sprintf("%s-L%d-%s-s%d", s.Cfg.Arch, s.Cfg.Layers, s.Cfg.Norm, s.Opt.Seed)
}

// Dir is the run's directory in the sweep's output directory out.
func (s Spec) Dir(out string) string { return filepath.Join(out, s.Name()) }

// Specs returns the runs of the grid in the order they run and are tabulated: by
// architecture, then depth, norm placement and seed.
func (g Grid) Specs(cfg model.Config, opt train.Options) []Spec {
	var out []Spec
	for _, arch := range g.Archs {
		for _, depth := range g.Depths {
			for _, norm := range g.Norms {
				for _, seed := range g.Seeds {
					s := Spec{Cfg: cfg, Opt: opt}
					s.Cfg.Arch, s.Cfg.Layers, s.Cfg.Norm, s.Opt.Seed = arch, depth, norm, seed
					if g.Recipe {
						s.Cfg = s.Cfg.WithCertifiedRecipe()
					}
					out = append(out, s)
				}
			}
		}
	}
	return out
}
