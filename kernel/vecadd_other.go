//go:build !amd64

package kernel

// addVec adds nothing and returns 0: the portable loop adds everything.
func addVec(y, a, b []float32) int { return 0 }

// scaleVec scales nothing and returns 0: the portable loop scales everything.
func scaleVec(y, x []float32, s float32) int { return 0 }

// scaleWideVec scales nothing and returns 0: the portable loop scales everything.
func scaleWideVec(y, x []float32, f float64) int { return 0 }

// adamVec updates nothing and returns 0: the portable loop updates everything.
func adamVec(p, g, m, v []float32, s *AdamStep[float32]) int { return 0 }

// subScaledVec subtracts nothing and returns 0: the portable loop does it all.
func subScaledVec(y, x []float32, f float32) int { return 0 }
