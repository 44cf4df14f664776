//go:build !amd64

package kernel

// adamVec updates nothing and returns 0: the portable loop updates everything.
func adamVec(p, g, m, v []float32, s *AdamStep[float32]) int { return 0 }
