// Package stats holds the summary statistics lipformer's experiments share: the median
// of a sample (median.go) and the least-squares line through points (line.go).
package stats
