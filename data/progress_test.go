package data

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

func TestProgressQuietUnlessTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	var buf bytes.Buffer
	for name, out := range map[string]io.Writer{"nil": nil, "buffer": &buf, "pipe": w} {
		if isInteractive(out) {
			t.Errorf("%s counts as a terminal", name)
		}
		bar, done := newProgress(out, 10, "x")
		bar.Write(make([]byte, 10))
		done()
		if bar != io.Discard {
			t.Errorf("%s gets a progress bar", name)
		}
	}
	if buf.Len() != 0 {
		t.Errorf("progress written to a buffer: %q", buf.String())
	}
}

func TestProgressQuietInCI(t *testing.T) {
	t.Setenv("CI", "true")
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no terminal to test with: %v", err)
	}
	defer tty.Close()
	if isInteractive(tty) {
		t.Error("a terminal counts as interactive while CI is set")
	}
}

func TestDrawProgressEndsItsLine(t *testing.T) {
	for _, total := range []int{1000, 2000} {
		var out bytes.Buffer
		bar, done := drawProgress(&out, 2000, "downloading enwik8.zip")
		bar.Write(make([]byte, total))
		done()
		text := out.String()
		if !strings.Contains(text, "downloading enwik8.zip") || strings.Count(text, "\n") != 1 || !strings.HasSuffix(text, "\n") {
			t.Errorf("after %d of 2000 bytes the bar shows %q; want the description and one final newline", total, text)
		}
	}
}
