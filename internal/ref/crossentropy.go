package ref

import (
	"fmt"
	"math"
)

// CrossEntropy returns the mean negative log-likelihood, in nats, of targets
// under the row-wise softmax of the (N, V) logits. targets has length N; an
// entry < 0 marks a position to ignore (it is not counted in the mean). It
// returns an error if a target is >= V or if every target is ignored.
func CrossEntropy(logits [][]float64, targets []int) (float64, error) {
	n, v, err := dims("logits", logits)
	if err != nil {
		return 0, err
	}
	if len(targets) != n {
		return 0, fmt.Errorf("ref: CrossEntropy targets has length %d, want N = %d", len(targets), n)
	}
	total, count := 0.0, 0
	for i, t := range targets {
		if t < 0 {
			continue
		}
		if t >= v {
			return 0, fmt.Errorf("ref: CrossEntropy targets[%d] = %d, want < V = %d", i, t, v)
		}
		maxLogit := math.Inf(-1)
		for j := range v {
			maxLogit = math.Max(maxLogit, logits[i][j])
		}
		sum := 0.0
		for j := range v {
			sum += math.Exp(logits[i][j] - maxLogit)
		}
		total += maxLogit + math.Log(sum) - logits[i][t]
		count++
	}
	if count == 0 {
		return 0, fmt.Errorf("ref: CrossEntropy has no targets >= 0 among %d", n)
	}
	return total / float64(count), nil
}
