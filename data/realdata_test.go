package data

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// sharedDataPath is the folder of real corpora next to the repository root.
// Tests that read it are skipped when it is absent.
const sharedDataPath = "../DATA"

func sharedData(t *testing.T) string {
	t.Helper()
	dir := filepath.FromSlash(sharedDataPath)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("real corpora not available (%v): this opt-in test reads DATA relative to the repository root", err)
	}
	return dir
}

func TestRealEnwik7LoadsAsPath(t *testing.T) {
	path := filepath.Join(sharedData(t), "enwik8", "enwik7")
	c, err := Load(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Train) != 9_000_000 || len(c.Valid) != 500_000 || len(c.Test) != 500_000 {
		t.Fatalf("enwik7 parts = %d, %d, %d; want 9,000,000, 500,000, 500,000", len(c.Train), len(c.Valid), len(c.Test))
	}
	if _, err := c.Vocab.EncodeCompact(c.Test); err != nil {
		t.Fatal(err)
	}
	t.Logf("enwik7: %d distinct bytes; %s", c.Vocab.Size(), c.Note)
}

func TestRealShakespeareVerifies(t *testing.T) {
	dir := sharedData(t)
	// The shared folder has the layout of the data directory, so no download
	// is attempted; an unreachable URL makes sure of it.
	c, err := Load(context.Background(), NameShakespeare, Options{Dir: dir, ShakespeareURL: "http://127.0.0.1:1/unused"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Vocab.Size() != 65 {
		t.Fatalf("Tiny Shakespeare has %d distinct bytes, want 65", c.Vocab.Size())
	}
	if len(c.Train) != 1_003_854 || len(c.Valid) != 111_540 {
		t.Fatalf("parts = %d, %d; want nanoGPT's 1,003,854 and 111,540", len(c.Train), len(c.Valid))
	}
	t.Log(c.Note)
}
