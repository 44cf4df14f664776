package data

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"path/filepath"

	"lipformer/internal/atomicfile"
)

// Fetch downloads url to the file dst, which appears only once its size is
// wantSize bytes and its SHA-256 is wantSHA256 (hex). The body is streamed to
// a temporary file in dst's directory and hashed on the way; on any failure
// (HTTP error, short or long body, wrong hash, cancelled ctx) dst is not
// created and the temporary file is removed. Directories above dst are
// created as needed. A progress bar is drawn on progress when it is a
// terminal (see [Options.Progress]); progress may be nil.
func Fetch(ctx context.Context, url, dst string, wantSize int64, wantSHA256 string, progress io.Writer) error {
	if wantSize <= 0 {
		return fmt.Errorf("data: download %s: expected size %d must be positive", url, wantSize)
	}
	wantSHA256, err := checkSHA256Hex(wantSHA256)
	if err != nil {
		return fmt.Errorf("data: download %s: %w", url, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("data: download %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("data: download %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("data: download %s: server answered %q, expected 200 OK", url, resp.Status)
	}
	if resp.ContentLength >= 0 && resp.ContentLength != wantSize {
		return fmt.Errorf("data: download %s for %s: server announces %d bytes, expected %d", url, dst, resp.ContentLength, wantSize)
	}
	bar, done := newProgress(progress, wantSize, "downloading "+filepath.Base(dst))
	defer done()
	return atomicfile.Write(dst, func(w io.Writer) error {
		h := sha256.New()
		// Read one byte past the expected size, to tell a long body from a right one.
		n, err := io.Copy(io.MultiWriter(w, h, bar), io.LimitReader(resp.Body, wantSize+1))
		if err != nil {
			return fmt.Errorf("data: download %s for %s: failed after %d of %d bytes: %w", url, dst, n, wantSize, err)
		}
		if err := verifyContent(dst, n, h.Sum(nil), wantSize, wantSHA256); err != nil {
			return fmt.Errorf("%w (downloaded from %s; the file was not kept)", err, url)
		}
		return nil
	})
}
