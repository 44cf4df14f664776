//go:build !amd64

package kernel

// scaleVec scales nothing and returns 0: the portable loop scales everything.
func scaleVec(y, x []float32, s float32) int { return 0 }

// scaleWideVec scales nothing and returns 0: the portable loop scales everything.
func scaleWideVec(y, x []float32, f float64) int { return 0 }

// subScaledVec subtracts nothing and returns 0: the portable loop does it all.
func subScaledVec(y, x []float32, f float32) int { return 0 }

// scaleDiffWideVec computes nothing and returns 0: the portable loop does it all.
func scaleDiffWideVec(y, g, v []float32, f float64, s float32) int { return 0 }
