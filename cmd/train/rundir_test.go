package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"lipformer/train"
)

// TestEachRunGetsItsOwnDirectory: without -out a run writes a new directory in out/ named
// from the architecture, the corpus and the start time, and names it at start; a second
// run started in the same minute gets a directory of its own instead of colliding, and
// -resume of the first announces the step it resumes from.
func TestEachRunGetsItsOwnDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("tale.txt", []byte(strings.Repeat("It was the best of times, it was the worst of times. ", 40)), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-data", "tale.txt", "-arch", "l2", "-layers", "1", "-heads", "2", "-width", "16", "-ctx", "16", "-batch", "2",
		"-steps", "2", "-eval-every", "2", "-sample", "0", "-progress-every", "0"}
	name := regexp.MustCompile(`msg="run directory (out/l2-tale-\d{8}-\d{4}(-2)?)"`)
	var dirs []string
	for range 2 {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		m := name.FindStringSubmatch(stderr.String())
		if m == nil {
			t.Fatalf("no run directory named at start:\n%s", stderr.String())
		}
		if _, err := os.Stat(filepath.Join(m[1], train.SummaryFile)); err != nil {
			t.Errorf("%s: %v", m[1], err)
		}
		dirs = append(dirs, m[1])
	}
	if dirs[0] == dirs[1] {
		t.Errorf("two runs wrote %q and %q, want two directories", dirs[0], dirs[1])
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-resume", dirs[0], "-steps", "4", "-sample", "0"}, &stdout, &stderr); err != nil {
		t.Fatalf("resume: %v\n%s", err, stderr.String())
	}
	if want := `msg="resumed from step 2" dir=` + dirs[0]; !strings.Contains(stderr.String(), want) {
		t.Errorf("resume logged:\n%s\nwant %q", stderr.String(), want)
	}
}
