package clitest

import (
	"flag"
	"slices"
	"strings"
	"testing"
)

// usageOf is the usage text flag prints for fs.
func usageOf(fs *flag.FlagSet) string {
	var b strings.Builder
	fs.SetOutput(&b)
	fs.PrintDefaults()
	return b.String()
}

// TestSchemeProblems: a shared name of another kind or meaning and a missing required
// flag are reported; a conforming set, a one-letter flag and a deprecated alias are not.
func TestSchemeProblems(t *testing.T) {
	good := flag.NewFlagSet("bench", flag.ContinueOnError)
	good.String("out", "", "output file: the JSON records")
	good.Bool("json", false, "print JSON on stdout")
	good.Int("reps", 10, "timed repetitions")
	good.Var(good.Lookup("reps").Value, "steps", "deprecated name of -reps")
	good.Int("n", 1, "bytes")
	if p := SchemeProblems("bench", usageOf(good)); len(p) > 0 {
		t.Errorf("a conforming flag set: %q", p)
	}
	bad := flag.NewFlagSet("bench", flag.ContinueOnError)
	bad.String("o", "", "output file")
	bad.Bool("json", false, "print JSON on stdout")
	bad.Int("steps", 10, "timed runs per measurement")
	bad.String("batch", "", "sequences of the context length")
	p := SchemeProblems("bench", usageOf(bad))
	want := []string{"bench -batch string", "bench -steps int", "bench has no -out"}
	if len(p) != len(want) || !slices.ContainsFunc(p, func(s string) bool { return strings.HasPrefix(s, want[0]) }) ||
		!slices.ContainsFunc(p, func(s string) bool { return strings.HasPrefix(s, want[1]) }) || p[2] != want[2] {
		t.Errorf("problems %q, want three beginning %q", p, want)
	}
}
