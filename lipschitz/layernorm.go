package lipschitz

import (
	"errors"
	"fmt"
	"math"
)

// LayerNormLip2 returns the exact 2-norm Lipschitz constant of a LayerNorm
// over D = len(gamma) features with scale gamma and variance offset eps
// (docs/math.md, "Bounds of tied L2 attention"): max_k |gamma_k| / sqrt(eps). It is the supremum of the
// Jacobian norm, approached at constant inputs. It returns an error if gamma
// is empty or not finite, or eps is not a finite positive number.
func LayerNormLip2(gamma []float64, eps float64) (float64, error) {
	if err := checkLayerNorm(gamma, eps); err != nil {
		return 0, err
	}
	largest := 0.0
	for _, g := range gamma {
		largest = math.Max(largest, math.Abs(g))
	}
	return largest / math.Sqrt(eps), nil
}

// LayerNormLipInf returns the inf-norm Lipschitz constant of a LayerNorm over
// D = len(gamma) features (docs/math.md, "Bounds of tied L2 attention"):
// max_k |gamma_k| / sqrt(eps) * (2D - 2) / D, attained at constant inputs.
// For D = 1 it is 0: the output is the constant beta. Errors are as for
// LayerNormLip2.
func LayerNormLipInf(gamma []float64, eps float64) (float64, error) {
	lip2, err := LayerNormLip2(gamma, eps)
	if err != nil {
		return 0, err
	}
	dim := float64(len(gamma))
	return lip2 * (2*dim - 2) / dim, nil
}

// checkLayerNorm validates the LayerNorm parameters gamma and eps.
func checkLayerNorm(gamma []float64, eps float64) error {
	if len(gamma) == 0 {
		return errors.New("lipschitz: LayerNorm gamma is empty")
	}
	for k, g := range gamma {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return fmt.Errorf("lipschitz: LayerNorm gamma[%d] = %v, want finite", k, g)
		}
	}
	if !(eps > 0) || math.IsInf(eps, 1) {
		return fmt.Errorf("lipschitz: LayerNorm eps = %v, want finite and > 0", eps)
	}
	return nil
}
