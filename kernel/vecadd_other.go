//go:build !amd64

package kernel

// addVec adds nothing and returns 0: the portable loop adds everything.
func addVec(y, a, b []float32) int { return 0 }
