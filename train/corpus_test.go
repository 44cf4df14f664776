package train

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lipformer/data"
	"lipformer/model"
	"lipformer/safetensors"
	"lipformer/spec"
)

// TestCheckpointStoresCorpus: every checkpoint and the summary store the corpus's
// absolute path, data directory, size and SHA-256, though the path and the directory were
// given relative to the current directory.
func TestCheckpointStoresCorpus(t *testing.T) {
	t.Chdir(t.TempDir())
	text := []byte(strings.Repeat("the quick brown fox jumps over the lazy dog. ", 60))
	if err := os.WriteFile("text.txt", text, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := data.Load(context.Background(), "text.txt", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.Dir = "corpora" // as a named corpus loaded with -data-dir corpora records it
	out := t.TempDir()
	r := &Run{Model: smallModel(t, c, spec.DP, spec.Float32, 1), Corpus: c, Opt: smallOptions(10), Out: out, Log: quiet()}
	sum, err := r.Train(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cwd, _ := os.Getwd()
	want := CorpusID{Path: filepath.Join(cwd, "text.txt"), DataDir: filepath.Join(cwd, "corpora"), Bytes: len(text), SHA256: c.SHA256}
	if c.SHA256 == "" || sum.CorpusID != want {
		t.Errorf("summary corpus %+v, want %+v", sum.CorpusID, want)
	}
	for _, f := range []string{LatestFile, BestFile} {
		meta, err := safetensors.ReadMetadataFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if id, ok, err := StoredCorpus(meta); !ok || err != nil || id != want {
			t.Errorf("%s: corpus %+v (%t, %v), want %+v", f, id, ok, err, want)
		}
	}
}

// TestResumeRefusesAnotherText: Run.Train refuses to resume on the same bytes in another
// order (the same vocabulary), naming the file and both hashes, and writes nothing.
func TestResumeRefusesAnotherText(t *testing.T) {
	c := smallCorpus(t)
	out := t.TempDir()
	r := &Run{Model: smallModel(t, c, spec.DP, spec.Float32, 1), Corpus: c, Opt: smallOptions(10), Out: out, Log: quiet()}
	if _, err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(out, MetricsFile))
	text, _ := os.ReadFile(c.Path)
	slices.Reverse(text)
	if err := os.WriteFile(c.Path, text, 0o644); err != nil {
		t.Fatal(err)
	}
	other, err := data.Load(context.Background(), c.Path, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r = &Run{Corpus: other, Opt: smallOptions(20), Out: out, Log: quiet()}
	if r.Model, r.Resume, err = model.Load(filepath.Join(out, LatestFile)); err != nil {
		t.Fatal(err)
	}
	_, err = r.Train(context.Background())
	for _, want := range []string{c.Path, c.SHA256, other.SHA256} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("resume on the reversed text: error %v, want one naming %s", err, want)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(out, MetricsFile)); !bytes.Equal(before, after) {
		t.Error("the refused resume changed the metrics log")
	}
}
