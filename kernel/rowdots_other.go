//go:build !amd64

package kernel

// dotRowsVec does nothing and returns 0: the portable loop computes everything.
func dotRowsVec(s, k, q []float32, alpha float32) int { return 0 }

// weightedSumVec does nothing and reports false: the portable loop computes everything.
func weightedSumVec(out, p, v []float32) bool { return false }
