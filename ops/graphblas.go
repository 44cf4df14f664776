package ops

import (
	G "gorgonia.org/gorgonia"

	"lipformer/kernel"
)

// init gives Gorgonia's own matrix products the BLAS of kernel's build where it is not
// Gorgonia's default, so that both run on the same library (docs/performance.md).
func init() {
	if b, ok := kernel.GraphBLAS(); ok {
		G.Use(b)
	}
}
