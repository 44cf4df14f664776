package plotting

import (
	"reflect"
	"testing"
)

// labels returns the labelled tick values.
func labels(lo, hi float64) []string {
	var out []string
	for _, t := range (logTicks{}).Ticks(lo, hi) {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return out
}

func TestLogTickLabels(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{0.25, 0.95, []string{"0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9"}},
		{1.5, 45, []string{"2", "5", "10", "20"}},
		{1e-4, 1e-1, []string{"0.0001", "0.001", "0.01", "0.1"}},
		{1, 1e30, []string{"1", "10000", "1e+08", "1e+12", "1e+16", "1e+20", "1e+24", "1e+28"}},
	} {
		if got := labels(c.lo, c.hi); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%g..%g: labels %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}

func TestLogTicksFallBackWhenNarrow(t *testing.T) {
	if got := labels(1.52, 1.58); len(got) < 2 {
		t.Errorf("1.52..1.58: labels %q, want at least two (linear ticks)", got)
	}
	if ticks := (logTicks{}).Ticks(1, 1e30); len(ticks) != 31 {
		t.Errorf("1..1e30: %d ticks, want the 31 powers of ten only", len(ticks))
	}
}

func TestLinearTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{0, 299, []string{"0", "50", "100", "150", "200", "250"}},
		{-0.07, 0.31, []string{"0", "0.1", "0.2", "0.3"}},
		{-0.12, 0.31, []string{"-0.1", "0", "0.1", "0.2", "0.3"}},
		{1.2e6, 9.9e6, []string{"2e+06", "4e+06", "6e+06", "8e+06"}},
		{3, 3, nil},
	} {
		var got []string
		for _, tk := range (linearTicks{}).Ticks(c.lo, c.hi) {
			got = append(got, tk.Label)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%g..%g: labels %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}
