// Package testfile writes the fixture files that tests of several packages share.
package testfile

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// JSONL writes recs, one JSON value per line, to a new file name in a temporary directory
// of t and returns its path.
func JSONL(t testing.TB, name string, recs ...any) string {
	t.Helper()
	var b bytes.Buffer
	for _, r := range recs {
		if err := json.NewEncoder(&b).Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// SharedData is the folder of real corpora at the repository root, DATA, seen from a
// package up depth folders below it (cmd/train: 2); a test that reads it is skipped
// without it.
func SharedData(t testing.TB, depth int) string {
	t.Helper()
	parts := make([]string, 0, depth+1)
	for range depth {
		parts = append(parts, "..")
	}
	dir, err := filepath.Abs(filepath.Join(append(parts, "DATA")...))
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "tinyshakespeare", "input.txt"))
	}
	if err != nil {
		t.Skipf("real corpora not available (%v): this opt-in test reads DATA at the repository root", err)
	}
	return dir
}
