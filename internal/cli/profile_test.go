package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordings: each recording writes its file once stopped, and a path that cannot be
// created gives an error naming the flag and the problem.
func TestRecordings(t *testing.T) {
	for _, c := range []struct {
		flag  string
		start func(string) (func(), error)
	}{{"-cpuprofile", StartCPUProfile}, {"-trace", StartTrace}} {
		path := filepath.Join(t.TempDir(), "rec")
		stop, err := c.start(path)
		if err != nil {
			t.Fatalf("%s: %v", c.flag, err)
		}
		stop()
		if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
			t.Errorf("%s wrote nothing: %v", c.flag, err)
		}
		_, err = c.start(filepath.Join(t.TempDir(), "missing", "rec"))
		if err == nil || !strings.HasPrefix(err.Error(), c.flag+": ") || !strings.Contains(err.Error(), "no such file") {
			t.Errorf("%s into a missing directory: %v, want an error naming the flag", c.flag, err)
		}
	}
}
