package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lipformer/internal/testfile"
	"lipformer/train"
)

// writeText writes text to path and returns its SHA-256 in hex.
func writeText(t *testing.T, path string, text []byte) string {
	t.Helper()
	if err := os.WriteFile(path, text, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(text)
	return hex.EncodeToString(sum[:])
}

// corpusText is a small corpus whose lines differ, so that reordering them changes it.
func corpusText() []byte {
	var b strings.Builder
	for i := range 60 {
		b.WriteString(strings.Repeat("abcdefghijklmnopqrstuvwxyz"[i%26:i%26+1], 1+i%7))
		b.WriteString(" it was the best of times, it was the worst of times.\n")
	}
	return []byte(b.String())
}

// reordered is text with its lines in reverse order: the same bytes, the same size and
// vocabulary, another text.
func reordered(text []byte) []byte {
	lines := strings.SplitAfter(string(text), "\n")
	slices.Reverse(lines)
	return []byte(strings.Join(lines, ""))
}

// runTrain runs train with args (and -sample 0) and returns its error and stderr.
func runTrain(args ...string) (error, string) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append(args, "-sample", "0"), &stdout, &stderr)
	return err, stderr.String()
}

// TestResumeRefusesAnotherCorpus: the corpus rewritten with the same bytes in another
// order (same size, same vocabulary) is refused on resume, with an error naming the file
// and the stored and found sizes and hashes, and the run is left as it was.
func TestResumeRefusesAnotherCorpus(t *testing.T) {
	path, out := filepath.Join(t.TempDir(), "text.txt"), filepath.Join(t.TempDir(), "run")
	text := corpusText()
	stored := writeText(t, path, text)
	if err, stderr := runTrain(append(tinyArgs(path, out), "-steps", "6")...); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	before, _ := os.ReadFile(filepath.Join(out, train.MetricsFile))
	found := writeText(t, path, reordered(text))
	err, _ := runTrain("-resume", out, "-steps", "9")
	for _, want := range []string{path, stored, found, "6"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("resume on a reordered corpus: error %v, want one naming %q", err, want)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(out, train.MetricsFile)); !bytes.Equal(before, after) {
		t.Error("the refused resume changed the metrics log")
	}
}

// TestResumeAcceptsTheMovedCorpus: -data-dir may be given on resume; -data may name the
// corpus file at its new place when its size and hash are the stored ones (and is refused
// otherwise), and the run then remembers that place.
func TestResumeAcceptsTheMovedCorpus(t *testing.T) {
	home := t.TempDir()
	path, out := filepath.Join(home, "text.txt"), filepath.Join(t.TempDir(), "run")
	text := corpusText()
	writeText(t, path, text)
	if err, stderr := runTrain(append(tinyArgs(path, out), "-steps", "6")...); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if err, stderr := runTrain("-resume", out, "-steps", "9", "-data-dir", t.TempDir()); err != nil {
		t.Errorf("-data-dir on resume: %v\n%s", err, stderr)
	}
	moved := filepath.Join(t.TempDir(), "moved.txt")
	if err := os.Rename(path, moved); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other.txt")
	writeText(t, other, reordered(text))
	if err, _ := runTrain("-resume", out, "-steps", "12", "-data", other); err == nil || !strings.Contains(err.Error(), other) {
		t.Errorf("-data naming another text on resume: error %v, want one naming %s", err, other)
	}
	if err, stderr := runTrain("-resume", out, "-steps", "12", "-data", moved); err != nil {
		t.Fatalf("-data naming the moved corpus on resume: %v\n%s", err, stderr)
	}
	// the run now remembers the new place: a resume without -data finds it
	if err, stderr := runTrain("-resume", out, "-steps", "15"); err != nil {
		t.Errorf("resume after the move: %v\n%s", err, stderr)
	}
}

// TestResumeWithTornSummary: an empty or truncated summary.json does not block a resume:
// it is rebuilt, with a warning, from the checkpoint and the metrics log.
func TestResumeWithTornSummary(t *testing.T) {
	for name, torn := range map[string]func([]byte) []byte{
		"empty":     func([]byte) []byte { return nil },
		"truncated": func(b []byte) []byte { return b[:len(b)/2] },
	} {
		path, out := filepath.Join(t.TempDir(), "text.txt"), filepath.Join(t.TempDir(), "run")
		writeText(t, path, corpusText())
		if err, stderr := runTrain(append(tinyArgs(path, out), "-steps", "6")...); err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		sumPath := filepath.Join(out, train.SummaryFile)
		b, err := os.ReadFile(sumPath)
		if err != nil {
			t.Fatal(err)
		}
		writeText(t, sumPath, torn(b))
		err, stderr := runTrain("-resume", out, "-steps", "9")
		if err != nil {
			t.Errorf("%s summary: resume: %v", name, err)
			continue
		}
		if !strings.Contains(stderr, "WARN") || !strings.Contains(stderr, train.SummaryFile) {
			t.Errorf("%s summary: no warning naming %s in\n%s", name, train.SummaryFile, stderr)
		}
		d, err := train.OpenRun(out)
		if err != nil || d.Summary() == nil || d.Summary().Steps != 9 {
			t.Errorf("%s summary: after the resume, summary %+v, error %v; want one of 9 steps", name, d.Summary(), err)
		}
	}
}

// TestResumeFindsTheStoredDataDir: a run of -data shakespeare -data-dir D resumes without
// -data-dir from D, not from the default directory (which is empty, and whose download
// could only reach a closed local port).
func TestResumeFindsTheStoredDataDir(t *testing.T) {
	dir := testfile.SharedData(t, 2)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")
	out := filepath.Join(t.TempDir(), "run")
	if err, stderr := runTrain(append(tinyArgs("shakespeare", out), "-data-dir", dir, "-steps", "3")...); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if err, stderr := runTrain("-resume", out, "-steps", "5"); err != nil {
		t.Errorf("resume without -data-dir: %v\n%s", err, stderr)
	}
}
