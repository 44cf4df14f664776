package data

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestLoadPath(t *testing.T) {
	text := []byte(strings.Repeat("It was the best of times. ", 40)) // 1040 bytes
	path := filepath.Join(t.TempDir(), "dickens.txt")
	if err := os.WriteFile(path, text, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != path || c.Path != path {
		t.Errorf("Name, Path = %q, %q; want both %q", c.Name, c.Path, path)
	}
	if len(c.Train) != 936 || len(c.Valid) != 52 || len(c.Test) != 52 {
		t.Errorf("parts = %d, %d, %d; want 936, 52, 52", len(c.Train), len(c.Valid), len(c.Test))
	}
	if !bytes.Equal(c.Vocab.Bytes(), NewVocab(text).Bytes()) {
		t.Errorf("vocabulary %q, want %q", c.Vocab.Bytes(), NewVocab(text).Bytes())
	}

	s, err := ParseSplit("0.5,0.25,0.25")
	if err != nil {
		t.Fatal(err)
	}
	c, err = Load(context.Background(), path, Options{Split: s})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Train) != 520 || len(c.Valid) != 260 || len(c.Test) != 260 {
		t.Errorf("parts with split %s = %d, %d, %d; want 520, 260, 260", s, len(c.Train), len(c.Valid), len(c.Test))
	}
}

func TestLoadMissingPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "enwik9")
	_, err := Load(context.Background(), path, Options{})
	wantErrorContaining(t, err, path, "does not exist", `"enwik8"`, `"shakespeare"`)
}

func TestLoadShortPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "short.txt")
	if err := os.WriteFile(path, []byte("hello world"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(context.Background(), path, Options{})
	wantErrorContaining(t, err, path, "11 bytes", "too few")
}

func TestLoadDefaultIsOpticks(t *testing.T) {
	for _, spec := range []string{"", NameOpticks} {
		c, err := Load(context.Background(), spec, Options{})
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(c.Path)
		if err != nil {
			t.Fatal(err)
		}
		if c.Name != NameOpticks || filepath.Base(c.Path) != "Isaac.Newton-Opticks.txt" {
			t.Errorf("Load(%q): Name %q, Path %q", spec, c.Name, c.Path)
		}
		n := len(c.Train) + len(c.Valid) + len(c.Test)
		train, valid, test := DefaultSplit().Cut(n)
		if int64(n) != info.Size() || len(c.Train) != train || len(c.Valid) != valid || len(c.Test) != test {
			t.Errorf("Load(%q): parts %d, %d, %d of a %d-byte file; want %d, %d, %d",
				spec, len(c.Train), len(c.Valid), len(c.Test), info.Size(), train, valid, test)
		}
		if !strings.Contains(string(c.Train), "OPTICKS") || !strings.Contains(c.Note, "Opticks") {
			t.Errorf("Load(%q) does not look like Newton's Opticks; note %q", spec, c.Note)
		}
	}
}

func TestFindUnderRootsErrors(t *testing.T) {
	root := t.TempDir()
	_, err := findUnderRoots([]string{"", root})
	wantErrorContaining(t, err, filepath.Join(root, "src", "testdata", "Isaac.Newton-Opticks.txt"), "absent", "shakespeare")
	_, err = findUnderRoots([]string{""})
	wantErrorContaining(t, err, "GOROOT is unknown")

	path := filepath.Join(root, "src", "testdata", "Isaac.Newton-Opticks.txt")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := findUnderRoots([]string{t.TempDir(), root}); err != nil || got != path {
		t.Fatalf("findUnderRoots = %q, %v; want %q", got, err, path)
	}
}

func TestLoadEnwik8Offline(t *testing.T) {
	dir := t.TempDir()
	url := closedURL()
	_, err := Load(context.Background(), NameEnwik8, Options{Dir: dir, Enwik8URL: url})
	wantErrorContaining(t, err, url, "without a network", filepath.Join(dir, "enwik8.zip"), filepath.Join(dir, "enwik8"), "36445475")
	assertEmptyDir(t, dir)
}

func TestLoadShakespeareWrongDownload(t *testing.T) {
	dir := t.TempDir()
	url := serveBytes(t, []byte("First Citizen:\n"))
	_, err := Load(context.Background(), NameShakespeare, Options{Dir: dir, ShakespeareURL: url})
	wantErrorContaining(t, err, url, "announces 15 bytes, expected 1115394")
	entries, _ := os.ReadDir(filepath.Join(dir, "tinyshakespeare"))
	if len(entries) != 0 {
		t.Fatalf("%d files left behind", len(entries))
	}
}

func TestLoadShakespeareWrongLocalFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tinyshakespeare", "input.txt")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, make([]byte, 1_115_394), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(context.Background(), NameShakespeare, Options{Dir: dir, ShakespeareURL: closedURL()})
	wantErrorContaining(t, err, path, "expected 86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed", hexSHA256(make([]byte, 1_115_394)), "remove it")
}

func TestLoadNamedCorpusRejectsSplit(t *testing.T) {
	s, err := ParseSplit("0.8,0.1,0.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{NameEnwik8, NameShakespeare} {
		_, err := Load(context.Background(), name, Options{Dir: t.TempDir(), Split: s})
		wantErrorContaining(t, err, name, "fixed standard split", "0.8,0.1,0.1")
	}
}

func TestDefaultDirHonoursXDG(t *testing.T) {
	switch runtime.GOOS {
	case "darwin", "ios", "windows", "plan9":
		t.Skipf("os.UserCacheDir ignores XDG_CACHE_HOME on %s", runtime.GOOS)
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	dir, err := DefaultDir()
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(cache, "lipformer") {
		t.Fatalf("DefaultDir() = %q, want %q", dir, filepath.Join(cache, "lipformer"))
	}
}

// TestLoadRefusesNonRegularFiles: a directory or a device (which, like /dev/urandom, may
// never end) is refused by name before anything is read from it.
func TestLoadRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(context.Background(), dir, Options{})
	wantErrorContaining(t, err, dir, "not a regular file", "a directory")
	if _, err := os.Stat(os.DevNull); err != nil || runtime.GOOS == "windows" {
		t.Skipf("no %s to test a device with", os.DevNull)
	}
	_, err = Load(context.Background(), os.DevNull, Options{})
	wantErrorContaining(t, err, os.DevNull, "not a regular file", "a character device")
}

// TestLoadRefusesHugeFiles: a file over MaxCorpusBytes is refused from its size alone. The
// file is sparse: it takes no disk space and is never read.
func TestLoadRefusesHugeFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.txt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxCorpusBytes + 1); err != nil {
		f.Close()
		t.Skipf("cannot make a sparse file of %d bytes: %v", MaxCorpusBytes+1, err)
	}
	f.Close()
	_, err = Load(context.Background(), path, Options{})
	wantErrorContaining(t, err, path, "4294967297 bytes", "more than the limit of 4294967296 bytes")
}

// TestLoadRemoteCorpusMustBeRegular: the file of a named corpus in the data directory is
// checked the same way before it is read.
func TestLoadRemoteCorpusMustBeRegular(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tinyshakespeare", "input.txt")
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Load(context.Background(), NameShakespeare, Options{Dir: dir, ShakespeareURL: closedURL()})
	wantErrorContaining(t, err, path, "not a regular file", "a directory")
}

// TestLoadRecordsSizeAndHash: a corpus records the size and SHA-256 of the bytes read,
// so the same bytes in another order are told apart.
func TestLoadRecordsSizeAndHash(t *testing.T) {
	dir := t.TempDir()
	text := []byte(strings.Repeat("abcdefghij klmnopqrst uvwxyz\n", 4))
	path := filepath.Join(dir, "a.txt")
	os.WriteFile(path, text, 0o644)
	c, err := Load(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Size != len(text) || c.SHA256 != hexSHA256(text) || c.Dir != "" {
		t.Errorf("size %d, SHA-256 %s, dir %q; want %d, %s, none", c.Size, c.SHA256, c.Dir, len(text), hexSHA256(text))
	}
	slices.Reverse(text)
	os.WriteFile(path, text, 0o644)
	d, err := Load(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Size != c.Size || d.SHA256 == c.SHA256 {
		t.Errorf("reversed: size %d, SHA-256 %s; want %d and another hash than %s", d.Size, d.SHA256, c.Size, c.SHA256)
	}
}
