//go:build openblas

package ops

/*
#cgo LDFLAGS: -lopenblas
*/
import "C"

import (
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

// Backend names the BLAS this build uses: pure Go (gonum) by default, OpenBLAS with the
// build tag openblas.
const Backend = "openblas"

// init makes Gorgonia's own matrix products use OpenBLAS too; the choice is fixed at build
// time by the openblas tag.
func init() { G.Use(netlib.Implementation{}) }

// impl is the BLAS of this build.
func impl() blasImpl { return netlib.Implementation{} }
