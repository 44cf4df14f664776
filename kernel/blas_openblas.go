//go:build openblas

package kernel

import (
	"gonum.org/v1/netlib/blas/netlib"

	"lipformer/internal/openblas"
)

// Backend names the BLAS this build uses: "gonum" by default (pure Go), "openblas" with
// the build tag openblas, as in this build.
const Backend = "openblas"

// init runs OpenBLAS single-threaded: every product is split across GOMAXPROCS goroutines
// by splitGemm instead, so that no two OpenBLAS thread pools compete (concurrent calls
// into threaded OpenBLAS spin-wait on each other).
func init() { openblas.SetThreads(1) }

// GraphBLAS returns the BLAS Gorgonia's own matrix products should use in this build, and
// false when it is Gorgonia's default (gonum): here single-threaded OpenBLAS with products
// split by rows across GOMAXPROCS goroutines, as Gemm's.
func GraphBLAS() (BLAS, bool) { return splitGemm{netlib.Implementation{}}, true }

// impl is the BLAS of this build.
func impl() blasImpl { return splitGemm{netlib.Implementation{}} }

// splitsRows reports whether impl cuts products of T into bands of rows: always, in this
// build.
func splitsRows[T Float]() bool { return true }

// serialImpl is the BLAS of this build for products that must stay on the calling
// goroutine: single-threaded OpenBLAS without the row splitting.
func serialImpl() blasImpl { return netlib.Implementation{} }
