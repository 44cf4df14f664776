package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dirEntries returns the names in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// writeString returns a write function that writes s.
func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

// wantErrorNaming fails unless err is an error whose message contains path.
func wantErrorNaming(t *testing.T, err error, path string) {
	t.Helper()
	if err == nil {
		t.Fatal("got no error")
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name %s", err, path)
	}
}

func TestWriteCreatesAndReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.json")
	for _, content := range []string{"first, longer", "second"} {
		if err := Write(path, writeString(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != content {
			t.Fatalf("file holds %q, want %q", got, content)
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", info.Mode().Perm())
	}
	if names := dirEntries(t, filepath.Dir(path)); len(names) != 1 {
		t.Errorf("directory holds %v, want only the file", names)
	}
}

func TestWriteLargerThanBuffer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.bin")
	want := make([]byte, 3*bufferSize+123)
	for i := range want {
		want[i] = byte(i*7 + i/256)
	}
	err := Write(path, func(w io.Writer) error {
		_, err := w.Write(want)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("file holds %d bytes that differ from the %d written", len(got), len(want))
	}
}

func TestWriteCreatesParentDirectories(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "no", "such", "dir", "f.txt")
	if err := Write(path, writeString("hello")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "hello" {
		t.Fatalf("file holds %q, want %q", got, "hello")
	}
	if names := dirEntries(t, filepath.Dir(path)); len(names) != 1 {
		t.Errorf("directory holds %v, want only the file", names)
	}
}

func TestWriteFailureLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, func(w io.Writer) error {
		// Past the buffer, so that bytes reach the temporary file.
		if _, err := w.Write(make([]byte, 2*bufferSize)); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want one wrapping %v", err, boom)
	}
	wantErrorNaming(t, err, path)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "old" {
		t.Fatalf("old file now holds %d bytes, want %q", len(got), "old")
	}
	if names := dirEntries(t, dir); len(names) != 1 {
		t.Errorf("directory holds %v, want only the old file", names)
	}
}

func TestWriteFailureCreatesNoFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "new.json")
	err := Write(path, func(w io.Writer) error {
		io.WriteString(w, "partial content")
		return errors.New("boom")
	})
	wantErrorNaming(t, err, path)
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Lstat(%s) = %v, want it not to exist", path, err)
	}
	if names := dirEntries(t, filepath.Dir(path)); len(names) != 0 {
		t.Errorf("directory holds %v, want nothing", names)
	}
}

func TestWriteUsesPartialTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "corpus.txt")
	err := Write(path, func(io.Writer) error {
		names := dirEntries(t, dir)
		if len(names) != 1 {
			t.Fatalf("directory holds %v while writing, want one temporary file", names)
		}
		if name := names[0]; !strings.HasPrefix(name, ".corpus.txt.") || !strings.HasSuffix(name, ".partial") {
			t.Errorf("temporary file %q, want .corpus.txt.*.partial", name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestWriteRenameFailureRemovesTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "taken")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "inside"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(path, writeString("content"))
	wantErrorNaming(t, err, path)
	if names := dirEntries(t, dir); len(names) != 1 || names[0] != "taken" {
		t.Errorf("directory holds %v, want only the existing directory", names)
	}
	if names := dirEntries(t, path); len(names) != 1 {
		t.Errorf("existing directory now holds %v, want its one file", names)
	}
}

func TestWriteUncreatableDirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(file, "sub", "f")
	called := false
	err := Write(path, func(io.Writer) error {
		called = true
		return nil
	})
	wantErrorNaming(t, err, path)
	if called {
		t.Error("write was called although the directory could not be created")
	}
}

// TestTemporaries: Temporaries lists the temporary files Write creates for a path, and no
// other file, even of a similar name.
func TestTemporaries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	if got, err := Temporaries(filepath.Join(dir, "missing", "x")); err != nil || len(got) != 0 {
		t.Fatalf("Temporaries in a missing directory: %v, %v; want none", got, err)
	}
	// A temporary made the way Write makes one stands for one that a crash left.
	f, err := os.CreateTemp(dir, ".ckpt.safetensors.*.partial")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, name := range []string{".ckpt.safetensors.x1.partial", "ckpt.safetensors.1.partial", ".ckpt.safetensors..partial",
		".best.safetensors.12.partial", ".ckpt.safetensors.12.partial.old", "ckpt.safetensors"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Temporaries(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != f.Name() {
		t.Errorf("Temporaries(%s) = %v, want [%s]", path, got, f.Name())
	}
}
