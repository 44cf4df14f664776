package data

import (
	"archive/zip"
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// member is a file inside a zip archive.
type member struct {
	name string
	body []byte
}

// zipOf returns a zip archive holding the given members, in order.
func zipOf(t *testing.T, members ...member) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		w, err := zw.Create(m.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(m.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zippedCorpus describes corpus as the member "corpus" of an archive
// "corpus.zip" served at url.
func zippedCorpus(corpus, archive []byte, url string) remoteCorpus {
	return remoteCorpus{
		file:    checkedFile{name: "corpus", size: int64(len(corpus)), sha256: hexSHA256(corpus)},
		archive: &checkedFile{name: "corpus.zip", size: int64(len(archive)), sha256: hexSHA256(archive)},
		member:  "corpus",
		url:     url,
	}
}

// countingServer serves body and counts the requests it answers.
func countingServer(t *testing.T, body []byte) (string, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/corpus.zip", &n
}

// closedURL returns the address of a server that is no longer listening.
func closedURL() string {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.URL + "/corpus.zip"
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestEnsureDownloadsAndExtractsOnce(t *testing.T) {
	corpus, _ := payload(20_000)
	archive := zipOf(t, member{"README", []byte("hi")}, member{"corpus", corpus})
	url, requests := countingServer(t, archive)
	r := zippedCorpus(corpus, archive, url)
	dir := t.TempDir()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	for range 2 {
		path, err := r.ensure(context.Background(), dir, nil, log)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, corpus) {
			t.Fatalf("extracted corpus differs (err %v)", err)
		}
	}
	if requests.Load() != 1 {
		t.Fatalf("%d requests, want 1: the second call must use the extracted file", requests.Load())
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "corpus.zip")); !bytes.Equal(got, archive) {
		t.Fatal("the downloaded archive was not kept")
	}
	for _, want := range []string{"downloading", "extracting"} {
		if !bytes.Contains(logs.Bytes(), []byte(want)) {
			t.Errorf("log %q does not mention %q", logs.String(), want)
		}
	}
}

func TestEnsureUsesArchiveInDir(t *testing.T) {
	corpus, _ := payload(3000)
	archive := zipOf(t, member{"corpus", corpus})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "corpus.zip"), archive, 0o644); err != nil {
		t.Fatal(err)
	}
	path, err := zippedCorpus(corpus, archive, closedURL()).ensure(context.Background(), dir, nil, discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, corpus) {
		t.Fatal("extracted corpus differs")
	}
}

func TestEnsureRejectsWrongArchiveInDir(t *testing.T) {
	corpus, _ := payload(3000)
	archive := zipOf(t, member{"corpus", corpus})
	other := zipOf(t, member{"corpus", corpus[:2999]})
	dir := t.TempDir()
	zipPath := filepath.Join(dir, "corpus.zip")
	if err := os.WriteFile(zipPath, other, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := zippedCorpus(corpus, archive, closedURL()).ensure(context.Background(), dir, nil, discardLogger())
	wantErrorContaining(t, err, zipPath, "remove it")
	if ok, _ := exists(filepath.Join(dir, "corpus")); ok {
		t.Fatal("a corpus was extracted from an archive that failed verification")
	}
}

func TestEnsureRejectsWrongMember(t *testing.T) {
	corpus, _ := payload(3000)
	tampered := bytes.Clone(corpus)
	tampered[1234] ^= 1
	for name, archive := range map[string][]byte{
		"content": zipOf(t, member{"corpus", tampered}),
		"size":    zipOf(t, member{"corpus", corpus[:2000]}),
		"missing": zipOf(t, member{"other", corpus}),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "corpus.zip"), archive, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := zippedCorpus(corpus, archive, closedURL()).ensure(context.Background(), dir, nil, discardLogger())
			wantErrorContaining(t, err, filepath.Join(dir, "corpus.zip"))
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Fatalf("dir holds %d entries, want only the archive", len(entries))
			}
		})
	}
}

func TestEnsureOfflineSaysWhereToPutFiles(t *testing.T) {
	corpus, _ := payload(100)
	archive := zipOf(t, member{"corpus", corpus})
	dir := t.TempDir()
	url := closedURL()
	_, err := zippedCorpus(corpus, archive, url).ensure(context.Background(), dir, nil, discardLogger())
	wantErrorContaining(t, err, "without a network", url, filepath.Join(dir, "corpus.zip"), filepath.Join(dir, "corpus"))
	assertEmptyDir(t, dir)
}

func TestEnsureDirectFile(t *testing.T) {
	corpus, sum := payload(4000)
	url, requests := countingServer(t, corpus)
	r := remoteCorpus{file: checkedFile{name: "sub/input.txt", size: 4000, sha256: sum}, url: url}
	dir := t.TempDir()
	path, err := r.ensure(context.Background(), dir, nil, discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, "sub", "input.txt") || requests.Load() != 1 {
		t.Fatalf("path %s after %d requests, want %s after 1", path, requests.Load(), filepath.Join(dir, "sub", "input.txt"))
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, corpus) {
		t.Fatal("downloaded corpus differs")
	}
}

// fakeEnwik8 is enwik8's description with its file and archive replaced by corpus and
// archive (a zip whose member is "enwik8"), under the names enwik8 and enwik8.zip.
func fakeEnwik8(corpus, archive []byte, url string) remoteCorpus {
	r := enwik8Corpus(url)
	r.file = checkedFile{name: "enwik8", size: int64(len(corpus)), sha256: hexSHA256(corpus)}
	r.archive = &checkedFile{name: "enwik8.zip", size: int64(len(archive)), sha256: hexSHA256(archive)}
	return r
}

// TestEnwik8InItsOwnFolder: enwik8 is found at D/enwik8/enwik8, the common layout where
// D/enwik8 is a folder (beside enwik7, say), and its archive at D/enwik8/enwik8.zip;
// nothing is downloaded.
func TestEnwik8InItsOwnFolder(t *testing.T) {
	corpus, _ := payload(3000)
	archive := zipOf(t, member{"enwik8", corpus})
	url, requests := countingServer(t, archive)
	r := fakeEnwik8(corpus, archive, url)

	dir := t.TempDir()
	folder := filepath.Join(dir, "enwik8")
	os.MkdirAll(folder, 0o755)
	os.WriteFile(filepath.Join(folder, "enwik7"), corpus[:1000], 0o644)
	os.WriteFile(filepath.Join(folder, "enwik8"), corpus, 0o644)
	path, err := r.ensure(context.Background(), dir, nil, discardLogger())
	if err != nil || path != filepath.Join(folder, "enwik8") {
		t.Errorf("file in D/enwik8/: path %q, error %v; want %s", path, err, filepath.Join(folder, "enwik8"))
	}

	dir = t.TempDir()
	folder = filepath.Join(dir, "enwik8")
	os.MkdirAll(folder, 0o755)
	os.WriteFile(filepath.Join(folder, "enwik8.zip"), archive, 0o644)
	path, err = r.ensure(context.Background(), dir, nil, discardLogger())
	if err != nil || path != filepath.Join(folder, "enwik8") {
		t.Errorf("archive in D/enwik8/: path %q, error %v; want %s", path, err, filepath.Join(folder, "enwik8"))
	}
	if got, _ := os.ReadFile(filepath.Join(folder, "enwik8")); !bytes.Equal(got, corpus) {
		t.Error("archive in D/enwik8/: the extracted corpus differs")
	}
	if requests.Load() != 0 {
		t.Errorf("%d downloads, want none", requests.Load())
	}
}

// TestEnwik8NotFoundSaysEveryPath: when enwik8 is in none of its places and cannot be
// downloaded, the error names every path that was looked for.
func TestEnwik8NotFoundSaysEveryPath(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "enwik8")
	os.MkdirAll(folder, 0o755)
	os.WriteFile(filepath.Join(folder, "enwik7"), []byte("not enwik8"), 0o644)
	_, err := Load(context.Background(), NameEnwik8, Options{Dir: dir, Enwik8URL: closedURL()})
	wantErrorContaining(t, err, "looked for", folder+" (a directory)", filepath.Join(folder, "enwik8"),
		filepath.Join(dir, "enwik8.zip"), filepath.Join(folder, "enwik8.zip"))
}
