package data

import (
	"fmt"
	"math/big"
	"strings"
)

// Split gives the fractions of a corpus that go, by position, to the train,
// valid and test parts. The fractions are exact decimals (held as rationals),
// so "0.9,0.05,0.05" sums to exactly 1 and cuts 100,000,000 bytes at exactly
// 90,000,000 and 95,000,000. The zero Split means [DefaultSplit].
type Split struct {
	fractions [3]*big.Rat // train, valid, test; never mutated once built
	text      string      // the fractions as parsed, e.g. "0.9,0.05,0.05"
}

// DefaultSplit returns the split 0.9, 0.05, 0.05 used for path corpora and
// for the default corpus.
func DefaultSplit() Split {
	return Split{
		fractions: [3]*big.Rat{big.NewRat(9, 10), big.NewRat(1, 20), big.NewRat(1, 20)},
		text:      "0.9,0.05,0.05",
	}
}

// ParseSplit parses three comma-separated decimal fractions for train, valid
// and test, such as "0.9,0.05,0.05". Each must be greater than 0 and together
// they must sum to exactly 1.
func ParseSplit(text string) (Split, error) {
	fields := strings.Split(text, ",")
	if len(fields) != 3 {
		return Split{}, fmt.Errorf("data: split %q: want three comma-separated fractions for train, valid and test, got %d field(s)", text, len(fields))
	}
	var s Split
	sum := new(big.Rat)
	for i, field := range fields {
		field = strings.TrimSpace(field)
		fields[i] = field
		r, ok := new(big.Rat).SetString(field)
		if !isDecimal(field) || !ok {
			return Split{}, fmt.Errorf("data: split %q: %s fraction %q is not a decimal number such as 0.05", text, partName(i), field)
		}
		if r.Sign() <= 0 {
			return Split{}, fmt.Errorf("data: split %q: %s fraction %s must be greater than 0", text, partName(i), field)
		}
		s.fractions[i] = r
		sum.Add(sum, r)
	}
	if sum.Cmp(big.NewRat(1, 1)) != 0 {
		return Split{}, fmt.Errorf("data: split %q: fractions sum to %s, want exactly 1", text, sum.RatString())
	}
	s.text = strings.Join(fields, ",")
	return s, nil
}

// isDecimal reports whether field is digits with at most one decimal point.
func isDecimal(field string) bool {
	digits, points := 0, 0
	for _, c := range field {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			points++
		default:
			return false
		}
	}
	return digits > 0 && points <= 1
}

// partName names part i of a corpus: 0 train, 1 valid, 2 test.
func partName(i int) string {
	return [...]string{"train", "valid", "test"}[i]
}

// String formats the split as ParseSplit reads it, e.g. "0.9,0.05,0.05".
func (s Split) String() string { return s.orDefault().text }

// Cut returns the lengths of the train, valid and test parts of n bytes: the
// train part ends at floor(n*train), the valid part at
// floor(n*(train+valid)), and the test part takes the rest.
func (s Split) Cut(n int) (train, valid, test int) {
	s = s.orDefault()
	trainEnd := floorTimes(n, s.fractions[0])
	validEnd := floorTimes(n, new(big.Rat).Add(s.fractions[0], s.fractions[1]))
	return trainEnd, validEnd - trainEnd, n - validEnd
}

// floorTimes returns floor(n*frac) for n >= 0 and 0 <= frac <= 1.
func floorTimes(n int, frac *big.Rat) int {
	x := new(big.Rat).Mul(big.NewRat(int64(n), 1), frac)
	return int(new(big.Int).Quo(x.Num(), x.Denom()).Int64())
}

// isZero reports whether s is the zero Split, which stands for DefaultSplit.
func (s Split) isZero() bool { return s.fractions[0] == nil }

func (s Split) orDefault() Split {
	if s.isZero() {
		return DefaultSplit()
	}
	return s
}
