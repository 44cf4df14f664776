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
