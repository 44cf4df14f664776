package ngram

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxOrder is the highest order a [Model] can have: an 8-gram fills the
// uint64 key of its count map.
const MaxOrder = 8

// The bounds of an estimated discount, inside (0, 1).
const (
	minDiscount = 0.01
	maxDiscount = 0.99
)

// Model is an interpolated Kneser-Ney byte n-gram model over a fixed
// vocabulary; see the package documentation for the estimate. Build one with
// [Train]. A Model is read-only after training and safe for concurrent use.
type Model struct {
	order     int
	vocabSize int
	inVocab   [256]bool
	levels    []level // levels[k-1] is order k
}

// level holds the counts of one order k.
type level struct {
	counts   map[uint64]uint32       // k-gram, packed, -> c_k: training count at the top order, continuation count below
	contexts map[uint64]contextStats // (k-1)-byte context, packed -> its sums over the next byte
	discount float64                 // D_k
}

// contextStats are the sums over the next byte w of a context h at one order.
type contextStats struct {
	total uint32 // c_k(h·), the sum of c_k(hw)
	types uint32 // N_k(h·), the number of w with c_k(hw) > 0
}

// Train counts the n-grams of text up to the given order (1 = unigram, 2 =
// bigram, ..., [MaxOrder]) and returns the model. vocab is the set of bytes
// the model predicts, distinct, in any order; it must hold every byte of
// text, and bytes absent from text get probability from the uniform floor.
func Train(text []byte, order int, vocab []byte) (*Model, error) {
	if order < 1 || order > MaxOrder {
		return nil, fmt.Errorf("ngram: order %d, want 1 to %d", order, MaxOrder)
	}
	if len(vocab) == 0 {
		return nil, fmt.Errorf("ngram: the vocabulary is empty")
	}
	if uint64(len(text)) > math.MaxUint32 {
		return nil, fmt.Errorf("ngram: training text of %d bytes, want at most %d", len(text), uint64(math.MaxUint32))
	}
	m := &Model{order: order, vocabSize: len(vocab)}
	first := make(map[byte]int, len(vocab))
	for i, b := range vocab {
		if j, dup := first[b]; dup {
			return nil, fmt.Errorf("ngram: byte %s appears twice in the vocabulary, at indices %d and %d", describeByte(b), j, i)
		}
		first[b] = i
		m.inVocab[b] = true
	}
	if err := m.checkText(text, "training text"); err != nil {
		return nil, err
	}
	m.levels = make([]level, order)
	m.levels[order-1].counts = countGrams(text, order)
	for k := order - 1; k >= 1; k-- {
		m.levels[k-1].counts = continuationCounts(m.levels[k].counts, text, k)
	}
	for k := range m.levels {
		m.levels[k].finish()
	}
	return m, nil
}

// checkText returns an error naming the first byte of text outside the
// vocabulary and its offset; what names the text.
func (m *Model) checkText(text []byte, what string) error {
	for i, b := range text {
		if !m.inVocab[b] {
			return fmt.Errorf("ngram: byte %s at offset %d of the %s is not in the vocabulary of %d bytes", describeByte(b), i, what, m.vocabSize)
		}
	}
	return nil
}

// mask keeps the low n bytes of a packed key.
func mask(n int) uint64 {
	if n >= 8 {
		return math.MaxUint64
	}
	return 1<<(8*n) - 1
}

// countGrams returns the number of occurrences of each n-gram of text, keyed
// by its bytes packed into a uint64, first byte highest.
func countGrams(text []byte, n int) map[uint64]uint32 {
	counts := make(map[uint64]uint32)
	mk := mask(n)
	var key uint64
	for i, b := range text {
		key = (key<<8 | uint64(b)) & mk
		if i >= n-1 {
			counts[key]++
		}
	}
	return counts
}

// continuationCounts returns the Kneser-Ney continuation count of each
// k-gram of text: the number of distinct bytes that precede it, plus one for
// the k-gram that begins the text. upper holds every distinct (k+1)-gram of
// text as a key; each k-gram after the start of the text is the suffix of
// one of them, and distinct (k+1)-grams with the same suffix differ in their
// first byte, so the count is the number of keys of upper with that suffix.
func continuationCounts(upper map[uint64]uint32, text []byte, k int) map[uint64]uint32 {
	counts := make(map[uint64]uint32)
	mk := mask(k)
	for g := range upper {
		counts[g&mk]++
	}
	if len(text) >= k {
		var start uint64
		for _, b := range text[:k] {
			start = start<<8 | uint64(b)
		}
		counts[start]++
	}
	return counts
}

// finish sums the counts of each context and estimates the discount.
func (l *level) finish() {
	l.contexts = make(map[uint64]contextStats)
	var n1, n2 int
	for g, c := range l.counts {
		s := l.contexts[g>>8]
		s.total += c
		s.types++
		l.contexts[g>>8] = s
		switch c {
		case 1:
			n1++
		case 2:
			n2++
		}
	}
	l.discount = discount(n1, n2)
}

// discount is n1 / (n1 + 2 n2) clamped to [minDiscount, maxDiscount]; with
// no counts at all it is 0.5, which no probability then uses.
func discount(n1, n2 int) float64 {
	if n1+n2 == 0 {
		return 0.5
	}
	d := float64(n1) / float64(n1+2*n2)
	return min(max(d, minDiscount), maxDiscount)
}

// Order returns the model's order n: it predicts a byte from up to n-1 bytes.
func (m *Model) Order() int { return m.order }

// Discounts returns the discounts D_1, ..., D_n of the orders 1 to n.
func (m *Model) Discounts() []float64 {
	d := make([]float64, len(m.levels))
	for k, l := range m.levels {
		d[k] = l.discount
	}
	return d
}

// Prob returns the probability of byte b after context, the bytes that
// precede it, of which only the last Order()-1 are used; a shorter context
// (as at the start of a text) is predicted at the order it fills. Over the
// vocabulary the probabilities sum to 1 and are all positive; a byte outside
// the vocabulary has probability 0. Context bytes outside the vocabulary are
// allowed and make an unseen context.
func (m *Model) Prob(context []byte, b byte) float64 {
	if !m.inVocab[b] {
		return 0
	}
	n := min(len(context), m.order-1)
	var h uint64
	for _, c := range context[len(context)-n:] {
		h = h<<8 | uint64(c)
	}
	return m.prob(h, n, b)
}

// prob is Prob for the n-byte context packed in the low bytes of h, n <
// order, and b in the vocabulary.
func (m *Model) prob(h uint64, n int, b byte) float64 {
	p := 1 / float64(m.vocabSize)
	for k := 1; k <= n+1; k++ {
		l := &m.levels[k-1]
		ctx := h & mask(k-1)
		s, ok := l.contexts[ctx]
		if !ok {
			// A context unseen at order k is unseen at every higher order,
			// whose contexts extend it to the left.
			break
		}
		c := float64(l.counts[ctx<<8|uint64(b)])
		d := l.discount
		p = (max(c-d, 0) + d*float64(s.types)*p) / float64(s.total)
	}
	return p
}

// BPC returns the mean of -log2 Prob over every byte of text but the first,
// each predicted from the up to Order()-1 bytes that precede it in text: the
// bits per byte by the convention of the project's language-model scores. A
// byte of text outside the vocabulary is an error that names it and its
// offset; so is a text shorter than 2 bytes.
func (m *Model) BPC(text []byte) (float64, error) {
	if len(text) < 2 {
		return 0, fmt.Errorf("ngram: evaluated text of %d byte(s), want at least 2 (the first byte is not scored)", len(text))
	}
	if err := m.checkText(text, "evaluated text"); err != nil {
		return 0, err
	}
	hm := mask(m.order - 1)
	var h uint64
	var bits float64
	for i := 1; i < len(text); i++ {
		h = (h<<8 | uint64(text[i-1])) & hm
		bits -= math.Log2(m.prob(h, min(i, m.order-1), text[i]))
	}
	return bits / float64(len(text)-1), nil
}

// Result is the score of one n-gram baseline: its order and its bits per
// byte on the evaluated text.
type Result struct {
	Order int     `json:"order"`
	BPC   float64 `json:"bpc"`
}

// Name names the result's order, as [Name] does.
func (r Result) Name() string { return Name(r.Order) }

// Name names an n-gram order: "unigram", "bigram", "trigram", then "4-gram",
// "5-gram" and so on.
func Name(order int) string {
	switch order {
	case 1:
		return "unigram"
	case 2:
		return "bigram"
	case 3:
		return "trigram"
	}
	return strconv.Itoa(order) + "-gram"
}

// Format writes results as "bigram 3.5100, trigram 2.8200, 5-gram 2.2000"
// (bits per byte).
func Format(results []Result) string {
	parts := make([]string, len(results))
	for i, r := range results {
		parts[i] = fmt.Sprintf("%s %.4f", r.Name(), r.BPC)
	}
	return strings.Join(parts, ", ")
}

// Baselines trains a model of each order on train and returns the bits per
// byte of each on eval ([Model.BPC]), in the order of orders.
func Baselines(train, eval, vocab []byte, orders []int) ([]Result, error) {
	return scoreEach(eval, orders, func(n int) (scorer, error) { return Train(train, n, vocab) })
}

// scorer is a trained model that scores a text in bits per byte.
type scorer interface {
	BPC(text []byte) (float64, error)
}

// scoreEach trains a model of each order with fit and returns the bits per
// byte of each on eval, in the order of orders.
func scoreEach(eval []byte, orders []int, fit func(order int) (scorer, error)) ([]Result, error) {
	results := make([]Result, 0, len(orders))
	for _, n := range orders {
		m, err := fit(n)
		if err != nil {
			return nil, err
		}
		bpc, err := m.BPC(eval)
		if err != nil {
			return nil, err
		}
		results = append(results, Result{Order: n, BPC: bpc})
	}
	return results, nil
}

// describeByte writes b in hex, followed by the character when b is
// printable ASCII.
func describeByte(b byte) string {
	if b < utf8.RuneSelf && strconv.IsPrint(rune(b)) {
		return fmt.Sprintf("%#02x %q", b, b)
	}
	return fmt.Sprintf("%#02x", b)
}
