package ngram

import (
	"fmt"
	"math"
)

// maxBoundedBytes caps the memory of a bounded model's fit: four arrays of rows x V
// float64s (counts, iterate, previous iterate, extrapolation).
const maxBoundedBytes = 2 << 30

// Bounded is a byte n-gram model whose logits all lie within distance rho of one point:
// the best count model under the logit radius of a model bounded end to end (docs/math.md,
// "What a logit ball allows"). Every context of 0 to n-1 bytes seen in training has one
// logit vector, fitted with the others by the least mean cross-entropy of the training
// counts of all orders together; a byte is predicted from the longest context before it
// that training saw, so a context never seen falls back to a shorter one. There is no
// smoothing: the radius is the only thing that keeps a rare context's prediction from
// being certain. Build one with [TrainBounded].
type Bounded struct {
	order    int
	index    [256]int
	contexts []map[uint64]int // contexts[k-1]: (k-1)-byte context, packed -> row of fit
	fit      *ballFit
}

// TrainBounded fits a bounded model of the order (1 to [MaxOrder]) and logit radius rho
// to text over vocab. A fit that would take more than 2 GiB is an error that says so.
func TrainBounded(text []byte, order int, vocab []byte, rho float64) (*Bounded, error) {
	if order < 1 || order > MaxOrder {
		return nil, fmt.Errorf("ngram: bounded model of order %d, want 1 to %d", order, MaxOrder)
	}
	index, err := vocabIndex(vocab)
	if err != nil {
		return nil, err
	}
	if len(text) == 0 {
		return nil, fmt.Errorf("ngram: bounded model of an empty training text")
	}
	m := &Bounded{order: order, index: index, contexts: make([]map[uint64]int, order)}
	for k := range m.contexts {
		m.contexts[k] = make(map[uint64]int)
	}
	var rows [][]float64
	hm := mask(order - 1)
	var h uint64 // the up to n-1 bytes before position i, packed
	for i, b := range text {
		if index[b] < 0 {
			return nil, fmt.Errorf("ngram: byte %s at offset %d of the training text is not in the vocabulary of %d bytes", describeByte(b), i, len(vocab))
		}
		for k := 1; k <= min(i+1, order); k++ {
			ctx := h & mask(k-1)
			r, ok := m.contexts[k-1][ctx]
			if !ok {
				if need := (len(rows) + 1) * len(vocab) * 8 * 4; need > maxBoundedBytes {
					return nil, fmt.Errorf("ngram: a bounded %s of this text has more than %d contexts of %d bytes: its fit would take over %d GiB; use a lower order", Name(order), len(rows), len(vocab), maxBoundedBytes>>30)
				}
				r = len(rows)
				m.contexts[k-1][ctx] = r
				rows = append(rows, make([]float64, len(vocab)))
			}
			rows[r][index[b]]++
		}
		h = (h<<8 | uint64(b)) & hm
	}
	if m.fit, err = fitBall(rows, rho, ballTol); err != nil {
		return nil, err
	}
	return m, nil
}

// BPC returns the mean of -log2 p over every byte of text but the first, each predicted
// from the up to n-1 bytes before it, as [Model.BPC]. A byte outside the vocabulary is an
// error that names it and its offset; so is a text shorter than 2 bytes.
func (m *Bounded) BPC(text []byte) (float64, error) {
	if len(text) < 2 {
		return 0, fmt.Errorf("ngram: evaluated text of %d byte(s), want at least 2 (the first byte is not scored)", len(text))
	}
	z := make([]float64, len(m.fit.center))
	hm := mask(m.order - 1)
	var h uint64
	var nats float64
	for i, b := range text {
		if m.index[b] < 0 {
			return 0, fmt.Errorf("ngram: byte %s at offset %d of the evaluated text is not in the vocabulary of %d bytes", describeByte(b), i, len(z))
		}
		if i > 0 {
			m.fit.logits(m.row(h, min(i, m.order-1)), z)
			nats += logSumExp(z) - z[m.index[b]]
		}
		h = (h<<8 | uint64(b)) & hm
	}
	return nats / float64(len(text)-1) / math.Ln2, nil
}

// TrainLoss returns the fit's mean cross-entropy over the training counts of all orders,
// in bits.
func (m *Bounded) TrainLoss() float64 { return m.fit.loss / math.Ln2 }

// row returns the row of the longest context seen in training among the last up to n
// bytes packed in h.
func (m *Bounded) row(h uint64, n int) int {
	for k := n + 1; k > 1; k-- {
		if r, ok := m.contexts[k-1][h&mask(k-1)]; ok {
			return r
		}
	}
	return m.contexts[0][0]
}

// BoundedBaselines trains a bounded model of each order and logit radius rho on train and
// returns the bits per byte of each on eval, in the order of orders.
func BoundedBaselines(train, eval, vocab []byte, orders []int, rho float64) ([]Result, error) {
	return scoreEach(eval, orders, func(n int) (scorer, error) { return TrainBounded(train, n, vocab, rho) })
}
