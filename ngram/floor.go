package ngram

import (
	"fmt"
	"math"

	"lipformer/kernel"
)

// Floor returns the least mean cross-entropy, in bits per byte, that any predictor can
// score on the targets when, within each group, its logits for every target lie within
// distance rho of one point (one point to a group): the floor under the certified logit
// radius of docs/math.md, "What a logit ball allows". A language model whose logits at
// position t lie within rho of a point c_t for every text is such a predictor when each
// group holds the targets scored at one position; no model of the kind, whatever its
// architecture, context or training, scores below the floor on those targets, because the
// floor lets it know each target. vocab is the corpus's vocabulary (the logits' length);
// a target outside it is an error.
func Floor(groups [][]byte, vocab []byte, rho float64) (float64, error) {
	index, err := vocabIndex(vocab)
	if err != nil {
		return 0, err
	}
	counts := make([][]float64, len(groups)) // (groups, V)
	var scored int
	for g, targets := range groups {
		counts[g] = make([]float64, len(vocab))
		for i, b := range targets {
			if index[b] < 0 {
				return 0, fmt.Errorf("ngram: floor: target %d of group %d, byte %s, is not in the vocabulary of %d bytes", i, g, describeByte(b), len(vocab))
			}
			counts[g][index[b]]++
		}
		scored += len(targets)
	}
	if scored == 0 {
		return 0, fmt.Errorf("ngram: floor of no targets")
	}
	if !(rho >= 0) || math.IsInf(rho, 0) {
		return 0, fmt.Errorf("ngram: floor at logit radius %g, want finite and >= 0", rho)
	}
	nats := make([]float64, len(groups)) // each group's summed cross-entropy
	errs := make([]error, len(groups))
	kernel.ParallelFor(len(groups), 1<<20, func(_, lo, hi int) {
		for g := lo; g < hi; g++ {
			nats[g], errs[g] = groupFloor(counts[g], rho)
		}
	})
	var sum float64
	for g := range groups {
		if errs[g] != nil {
			return 0, errs[g]
		}
		sum += nats[g]
	}
	return sum / float64(scored) / math.Ln2, nil
}

// groupFloor returns the least summed cross-entropy in nats of the counts of one group's
// targets (V) by logits within rho of one point, each target's logits its own.
func groupFloor(counts []float64, rho float64) (float64, error) {
	// One row to each target byte, all of its counts on itself: the predictor that knows
	// the target still has to keep its logits within rho of the group's point.
	var rows [][]float64
	var n float64
	for j, c := range counts {
		if c > 0 {
			row := make([]float64, len(counts))
			row[j] = c
			rows = append(rows, row)
			n += c
		}
	}
	if n == 0 {
		return 0, nil
	}
	fit, err := fitBall(rows, rho, ballTol)
	if err != nil {
		return 0, err
	}
	return fit.loss * n, nil
}

// vocabIndex maps each byte of vocab to its position in it, every other byte to -1; a
// byte repeated in vocab is an error.
func vocabIndex(vocab []byte) ([256]int, error) {
	var index [256]int
	for i := range index {
		index[i] = -1
	}
	if len(vocab) == 0 {
		return index, fmt.Errorf("ngram: empty vocabulary")
	}
	for i, b := range vocab {
		if index[b] >= 0 {
			return index, fmt.Errorf("ngram: byte %s appears twice in the vocabulary", describeByte(b))
		}
		index[b] = i
	}
	return index, nil
}
