//go:build !amd64

package kernel

// vecKernels is false: this architecture has no assembly kernels.
func vecKernels() bool { return false }

// expNegVec does nothing and returns 0: the portable loop computes everything.
func expNegVec(dst, src []float32) int { return 0 }

// geluVec does nothing and returns 0: the portable loop computes everything.
func geluVec(y, x []float32) int { return 0 }

// geluGradVec does nothing and returns 0: the portable loop computes everything.
func geluGradVec(dx, x, dy []float32) int { return 0 }

// eluVec does nothing and returns 0: the portable loop computes everything.
func eluVec(y, x []float32) int { return 0 }

// eluGradVec does nothing and returns 0: the portable loop computes everything.
func eluGradVec(dx, y, dy []float32) int { return 0 }

// expShiftSumVec does nothing and returns 0, 0: the portable loop computes everything.
func expShiftSumVec(dst, src []float32, shift float32) (float64, int) { return 0, 0 }
