//go:build !openblas

package ops

import "gonum.org/v1/gonum/blas/gonum"

// Backend names the BLAS this build uses: pure Go (gonum) by default, OpenBLAS with the
// build tag openblas.
const Backend = "gonum"

// impl is the BLAS of this build.
func impl() blasImpl { return gonum.Implementation{} }

// serialImpl is the BLAS of this build for products that must stay on the calling
// goroutine: gonum on tiles too small for it to parallelise.
func serialImpl() blasImpl { return serialTiles{gonum.Implementation{}} }
