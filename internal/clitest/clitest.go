// Package clitest checks, in the tests of every program, the command-line conventions the
// programs share: -h and -help print the usage alone, shared flag names mean one thing
// (Scheme), and positional arguments are refused with one message.
package clitest

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"
)

// Run is a program's run function: its arguments and where it writes.
type Run func(args []string, stdout, stderr io.Writer) error

// HelpAndExtraArguments checks program name's run: -h and -help must print the usage (with
// flag among its flags, and the shared flags as Scheme and Required say) on stderr and
// nothing else, and return flag.ErrHelp (on which main
// exits 0) or nil; args followed by "extra" must be refused, before any work, with
// `unexpected arguments ["extra"]: NAME takes only flags (-h lists them)`.
func HelpAndExtraArguments(t testing.TB, name, flagName string, args []string, run Run) {
	t.Helper()
	for _, h := range []string{"-h", "-help"} {
		var stdout, stderr bytes.Buffer
		err := run([]string{h}, &stdout, &stderr)
		if strings.Contains(stderr.String(), "help requested") {
			t.Errorf("%s %s: stderr %q reports the help as an error", name, h, stderr.String())
		}
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s %s: error %v, want none or flag.ErrHelp (which main treats as success)", name, h, err)
		}
		if u := stderr.String(); !strings.HasPrefix(u, "Usage of "+name+":") || !strings.Contains(u, "  -"+flagName+" ") || stdout.Len() > 0 {
			t.Errorf("%s %s: stdout %q, stderr %q; want the usage on stderr alone", name, h, stdout.String(), u)
		}
		for _, p := range SchemeProblems(name, stderr.String()) {
			t.Errorf("%s %s: %s", name, h, p)
		}
	}
	var stdout, stderr bytes.Buffer
	args = append(append([]string{}, args...), "extra")
	err := run(args, &stdout, &stderr)
	if want := fmt.Sprintf(`unexpected arguments ["extra"]: %s takes only flags (-h lists them)`, name); err == nil || err.Error() != want {
		t.Errorf("%q: error %v, want %q", args, err, want)
	}
}
