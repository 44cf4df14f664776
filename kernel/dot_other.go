//go:build !amd64

package kernel

// dotLanesVec does nothing and returns 0: the portable loop computes everything.
func dotLanesVec[T Float](a, b []T, s *[4]float64) int { return 0 }
