package data

import (
	"archive/zip"
	"crypto/sha256"
	"fmt"
	"io"
	"path/filepath"

	"lipformer/internal/atomicfile"
)

// extractMember writes the member named member of the zip archive at
// zipPath to the file dst, which appears only once its size and SHA-256
// match want. The archive's own CRC-32 is checked as well.
func extractMember(zipPath, member, dst string, want checkedFile, progress io.Writer) error {
	archive, err := zip.OpenReader(zipPath)
	if err != nil {
		return fmt.Errorf("data: open zip archive %s: %w", zipPath, err)
	}
	defer archive.Close()
	var entry *zip.File
	names := make([]string, 0, len(archive.File))
	for _, f := range archive.File {
		names = append(names, f.Name)
		if f.Name == member {
			entry = f
		}
	}
	if entry == nil {
		return fmt.Errorf("data: zip archive %s has no member %q (members: %q)", zipPath, member, names)
	}
	if got := entry.UncompressedSize64; got != uint64(want.size) {
		return fmt.Errorf("data: zip archive %s: member %q is %d bytes, expected %d", zipPath, member, got, want.size)
	}
	r, err := entry.Open()
	if err != nil {
		return fmt.Errorf("data: zip archive %s: open member %q: %w", zipPath, member, err)
	}
	defer r.Close()
	bar, done := newProgress(progress, want.size, "extracting "+filepath.Base(dst))
	defer done()
	return atomicfile.Write(dst, func(w io.Writer) error {
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(w, h, bar), io.LimitReader(r, want.size+1))
		if err != nil {
			return fmt.Errorf("data: zip archive %s: extract member %q to %s: %w", zipPath, member, dst, err)
		}
		if err := verifyContent(dst, n, h.Sum(nil), want.size, want.sha256); err != nil {
			return fmt.Errorf("%w (extracted from %s; the file was not kept)", err, zipPath)
		}
		return nil
	})
}
