package data

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// payload returns n deterministic bytes and their SHA-256 in hex.
func payload(n int) ([]byte, string) {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/256)
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:])
}

func hexSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// serve starts a test server that answers every request with handler.
func serve(t *testing.T, handler http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv.URL
}

// serveBytes serves body with its Content-Length.
func serveBytes(t *testing.T, body []byte) string {
	return serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
}

// assertEmptyDir fails unless dir holds no files: no destination and no
// temporary file left behind.
func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("%s was left behind in %s", e.Name(), dir)
	}
}

func wantErrorContaining(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	t.Logf("error: %v", err)
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

func TestFetchSuccess(t *testing.T) {
	body, sum := payload(100_000)
	url := serveBytes(t, body)
	dst := filepath.Join(t.TempDir(), "sub", "dir", "file.bin")
	var progress bytes.Buffer
	if err := Fetch(context.Background(), url, dst, int64(len(body)), strings.ToUpper(sum), &progress); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, body) {
		t.Fatal("downloaded bytes differ from the served ones")
	}
	if progress.Len() != 0 {
		t.Errorf("progress written to a non-terminal: %q", progress.String())
	}
	entries, _ := os.ReadDir(filepath.Dir(dst))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the file", len(entries))
	}
}

func TestFetchWrongChecksum(t *testing.T) {
	body, _ := payload(5000)
	_, otherSum := payload(5001)
	url := serveBytes(t, body)
	dir := t.TempDir()
	dst := filepath.Join(dir, "file.bin")
	err := Fetch(context.Background(), url, dst, int64(len(body)), otherSum, nil)
	wantErrorContaining(t, err, dst, "expected "+otherSum, hexSHA256(body), url)
	assertEmptyDir(t, dir)
}

func TestFetchTruncatedBody(t *testing.T) {
	body, sum := payload(50_000)
	for name, handler := range map[string]http.HandlerFunc{
		// The server announces the full length and closes the connection early.
		"content-length": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write(body[:len(body)/2])
		},
		// No length is announced and the body simply ends early.
		"chunked": func(w http.ResponseWriter, r *http.Request) {
			w.Write(body[:len(body)/2])
			w.(http.Flusher).Flush()
		},
	} {
		t.Run(name, func(t *testing.T) {
			url := serve(t, handler)
			dir := t.TempDir()
			dst := filepath.Join(dir, "file.bin")
			err := Fetch(context.Background(), url, dst, int64(len(body)), sum, nil)
			wantErrorContaining(t, err, dst, "50000")
			assertEmptyDir(t, dir)
		})
	}
}

func TestFetchLongBody(t *testing.T) {
	body, _ := payload(3000)
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write(body)
		w.(http.Flusher).Flush()
	})
	dir := t.TempDir()
	dst := filepath.Join(dir, "file.bin")
	err := Fetch(context.Background(), url, dst, 2000, hexSHA256(body[:2000]), nil)
	wantErrorContaining(t, err, dst, "size is more than the expected 2000 bytes")
	assertEmptyDir(t, dir)
}

func TestFetchAnnouncedLengthMismatch(t *testing.T) {
	body, sum := payload(3000)
	url := serveBytes(t, body)
	dir := t.TempDir()
	err := Fetch(context.Background(), url, filepath.Join(dir, "f"), 4000, sum, nil)
	wantErrorContaining(t, err, "announces 3000 bytes, expected 4000")
	assertEmptyDir(t, dir)
}

func TestFetchNotFound(t *testing.T) {
	url := serve(t, http.NotFound)
	dir := t.TempDir()
	_, sum := payload(10)
	err := Fetch(context.Background(), url+"/enwik8.zip", filepath.Join(dir, "f"), 10, sum, nil)
	wantErrorContaining(t, err, url+"/enwik8.zip", "404 Not Found")
	assertEmptyDir(t, dir)
}

func TestFetchCancelled(t *testing.T) {
	body, sum := payload(10)
	url := serveBytes(t, body)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	err := Fetch(ctx, url, filepath.Join(dir, "f"), 10, sum, nil)
	wantErrorContaining(t, err, "context canceled")
	assertEmptyDir(t, dir)
}

func TestFetchRejectsBadExpectations(t *testing.T) {
	dir := t.TempDir()
	_, sum := payload(10)
	wantErrorContaining(t, Fetch(context.Background(), "http://127.0.0.1:1/x", filepath.Join(dir, "f"), 10, "abc", nil), `"abc" is not 64 hex digits`)
	wantErrorContaining(t, Fetch(context.Background(), "http://127.0.0.1:1/x", filepath.Join(dir, "f"), 0, sum, nil), "size 0 must be positive")
	assertEmptyDir(t, dir)
}
