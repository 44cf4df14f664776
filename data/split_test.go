package data

import (
	"strings"
	"testing"
)

func TestParseSplitCutsExactly(t *testing.T) {
	for _, tc := range []struct {
		text               string
		n                  int
		train, valid, test int
	}{
		{"0.9,0.05,0.05", 100_000_000, 90_000_000, 5_000_000, 5_000_000},
		{"0.9,0.05,0.05", 10, 9, 0, 1},
		{"0.9,0.05,0.05", 567_198, 510_478, 28_360, 28_360},
		{"0.7,0.2,0.1", 10, 7, 2, 1},
		{"0.29,0.01,0.7", 100, 29, 1, 70}, // float64 0.29*100 is 28.999999999999996
		{" 0.5 , 0.25, 0.25 ", 7, 3, 2, 2},
	} {
		s, err := ParseSplit(tc.text)
		if err != nil {
			t.Fatalf("ParseSplit(%q): %v", tc.text, err)
		}
		train, valid, test := s.Cut(tc.n)
		if train != tc.train || valid != tc.valid || test != tc.test {
			t.Errorf("ParseSplit(%q).Cut(%d) = %d, %d, %d; want %d, %d, %d",
				tc.text, tc.n, train, valid, test, tc.train, tc.valid, tc.test)
		}
	}
}

func TestParseSplitErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"0.9,0.1", "three"},
		{"0.5,0.25,0.125,0.125", "three"},
		{"0.9,0.05,0.06", "sum to 101/100"},
		{"0.9,0.05,0.04", "sum to 99/100"},
		{"1,0,0", "valid fraction 0 must be greater than 0"},
		{"0.9,abc,0.05", `valid fraction "abc" is not a decimal`},
		{"0.9,1/20,0.05", `"1/20" is not a decimal`},
		{"0.9,5e-2,0.05", `"5e-2" is not a decimal`},
		{"0.9,-0.05,0.15", `"-0.05" is not a decimal`},
		{"0.9,,0.1", `valid fraction "" is not a decimal`},
		{"0.9,0.05,.", `test fraction "." is not a decimal`},
	} {
		_, err := ParseSplit(tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseSplit(%q) error = %v, want it to contain %q", tc.text, err, tc.want)
		}
	}
}

func TestSplitString(t *testing.T) {
	s, err := ParseSplit(" 0.8, 0.1 ,0.1")
	if err != nil {
		t.Fatal(err)
	}
	if s.String() != "0.8,0.1,0.1" {
		t.Errorf("String() = %q, want %q", s.String(), "0.8,0.1,0.1")
	}
	var zero Split
	if zero.String() != "0.9,0.05,0.05" || DefaultSplit().String() != "0.9,0.05,0.05" {
		t.Errorf("zero and default String() = %q, %q; want 0.9,0.05,0.05", zero.String(), DefaultSplit().String())
	}
	if a, b, c := zero.Cut(1000); a != 900 || b != 50 || c != 50 {
		t.Errorf("zero Split cuts 1000 bytes into %d, %d, %d; want 900, 50, 50", a, b, c)
	}
}

func TestEnwik8SplitIsStandard(t *testing.T) {
	train, valid, test := enwik8Split().Cut(100_000_000)
	if train != 90_000_000 || valid != 5_000_000 || test != 5_000_000 {
		t.Fatalf("enwik8 split = %d, %d, %d; want 90,000,000, 5,000,000, 5,000,000", train, valid, test)
	}
}
