package ref

import "math"

// GELU is the exact Gaussian error linear unit x * Phi(x), with Phi the
// standard normal CDF computed as (1 + erf(x / sqrt 2)) / 2; 0 at -Inf, its limit.
func GELU(x float64) float64 {
	if math.IsInf(x, -1) {
		return 0
	}
	return x * 0.5 * (1 + math.Erf(x/math.Sqrt2))
}
