package expressive

import (
	"fmt"
	"math"

	"lipformer/internal/stats"
)

// FitD fits the smallest widths d found at lengths L both against log L (natural log)
// and against L, by least squares (stats.FitLine).
func FitD(L, d []int) (vsLogL, vsL stats.Line, err error) {
	if len(L) != len(d) {
		return stats.Line{}, stats.Line{}, fmt.Errorf("expressive: %d lengths but %d widths", len(L), len(d))
	}
	logL, lin, dy := make([]float64, len(L)), make([]float64, len(L)), make([]float64, len(L))
	for i := range L {
		if L[i] < 1 {
			return stats.Line{}, stats.Line{}, fmt.Errorf("expressive: length L = %d in a fit, want >= 1", L[i])
		}
		logL[i], lin[i], dy[i] = math.Log(float64(L[i])), float64(L[i]), float64(d[i])
	}
	if vsLogL, err = stats.FitLine(logL, dy); err != nil {
		return stats.Line{}, stats.Line{}, err
	}
	vsL, err = stats.FitLine(lin, dy)
	return vsLogL, vsL, err
}
