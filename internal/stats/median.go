package stats

import "slices"

// Number is a type whose values can be sorted and averaged: floats, and integers such as
// time.Duration.
type Number interface {
	~int64 | ~float64
}

// Median returns the median of xs, which must not be empty: the middle value, or the mean
// of the middle two for an even count (truncated for integers). xs is not modified.
func Median[T Number](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
