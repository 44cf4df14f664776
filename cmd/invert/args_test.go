package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
)

// TestHelpAndExtraArguments: -h and -help print the usage alone (run returns flag.ErrHelp, on
// which main exits 0), and positional arguments are refused, before any work, with the
// message every program gives.
func TestHelpAndExtraArguments(t *testing.T) {
	for _, h := range []string{"-h", "-help"} {
		var stdout, stderr bytes.Buffer
		args := []string{h}
		err := run(context.Background(), args, &stdout, &stderr)
		if strings.Contains(stderr.String(), "help requested") {
			t.Errorf("%s: stderr %q reports the help as an error", h, stderr.String())
		}
		if !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s: error %v, want flag.ErrHelp (which main treats as success)", h, err)
		}
		if u := stderr.String(); !strings.HasPrefix(u, "Usage of invert:") || !strings.Contains(u, "  -spread ") || stdout.Len() > 0 {
			t.Errorf("%s: stdout %q, stderr %q; want the usage on stderr alone", h, stdout.String(), u)
		}
	}
	var stdout, stderr bytes.Buffer
	args := []string{"-ckpt", "nowhere", "extra"}
	err := run(context.Background(), args, &stdout, &stderr)
	want := `unexpected arguments ["extra"]: invert takes only flags (-h lists them)`
	if err == nil || err.Error() != want {
		t.Errorf("%q: error %v, want %q", args, err, want)
	}
}
