//go:build openblas

package ops

import (
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"

	"lipformer/internal/openblas"
)

// Backend names the BLAS this build uses: pure Go (gonum) by default, OpenBLAS with the
// build tag openblas.
const Backend = "openblas"

// init runs OpenBLAS single-threaded and gives Gorgonia the row-splitting wrapper, so that
// every matrix product is parallel across GOMAXPROCS goroutines and no two OpenBLAS thread
// pools compete (concurrent calls into threaded OpenBLAS spin-wait on each other).
func init() {
	openblas.SetThreads(1)
	G.Use(splitGemm{netlib.Implementation{}})
}

// impl is the BLAS of this build.
func impl() blasImpl { return splitGemm{netlib.Implementation{}} }

// serialImpl is the BLAS of this build for products that must stay on the calling
// goroutine: single-threaded OpenBLAS without the row splitting.
func serialImpl() blasImpl { return netlib.Implementation{} }
