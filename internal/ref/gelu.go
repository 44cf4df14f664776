package ref

import "math"

// GELU is the exact Gaussian error linear unit x * Phi(x), with Phi the
// standard normal CDF computed as (1 + erf(x / sqrt 2)) / 2.
func GELU(x float64) float64 {
	return x * 0.5 * (1 + math.Erf(x/math.Sqrt2))
}
