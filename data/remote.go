package data

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// remoteCorpus is a corpus file that lives in the data directory and is
// downloaded there when missing, either directly or inside a zip archive.
type remoteCorpus struct {
	file    checkedFile  // the corpus itself
	archive *checkedFile // the zip archive that url serves, or nil when url serves file
	member  string       // the name of file inside archive
	url     string
}

// ensure returns the path of the corpus file in dir, after creating it if it
// is missing: from the archive when that is in dir, else from a download. An
// existing archive is verified before use. The corpus file's own content is
// left for the caller to verify as it reads it.
func (r remoteCorpus) ensure(ctx context.Context, dir string, progress io.Writer, log *slog.Logger) (string, error) {
	path := filepath.Join(dir, r.file.name)
	if ok, err := exists(path); err != nil {
		return "", err
	} else if ok {
		return path, nil
	}
	if r.archive == nil {
		if err := r.download(ctx, dir, r.file, progress, log); err != nil {
			return "", err
		}
		return path, nil
	}
	zipPath := filepath.Join(dir, r.archive.name)
	ok, err := exists(zipPath)
	switch {
	case err != nil:
		return "", err
	case ok:
		log.Info("verifying archive", "path", zipPath)
		if err := verifyFile(zipPath, *r.archive); err != nil {
			return "", fmt.Errorf("%w (remove it to download it again)", err)
		}
	default:
		if err := r.download(ctx, dir, *r.archive, progress, log); err != nil {
			return "", err
		}
	}
	log.Info("extracting", "archive", zipPath, "member", r.member, "path", path)
	if err := extractMember(zipPath, r.member, path, r.file, progress); err != nil {
		return "", err
	}
	return path, nil
}

// download fetches url to the file f in dir, explaining how to do without a
// network when it fails.
func (r remoteCorpus) download(ctx context.Context, dir string, f checkedFile, progress io.Writer, log *slog.Logger) error {
	dst := filepath.Join(dir, f.name)
	log.Info("downloading", "url", r.url, "path", dst, "bytes", f.size)
	if err := Fetch(ctx, r.url, dst, f.size, f.sha256, progress); err != nil {
		return fmt.Errorf("%w\n%s", err, r.placementHint(dir))
	}
	log.Info("downloaded and verified", "path", dst, "sha256", f.sha256)
	return nil
}

// placementHint tells where to put the files by hand.
func (r remoteCorpus) placementHint(dir string) string {
	filePath := filepath.Join(dir, r.file.name)
	if r.archive == nil {
		return fmt.Sprintf("data: without a network, get %s elsewhere and put it at %s (%d bytes, SHA-256 %s)",
			r.url, filePath, r.file.size, r.file.sha256)
	}
	return fmt.Sprintf("data: without a network, get %s elsewhere and put it at %s (%d bytes, SHA-256 %s), or put its member %q at %s (%d bytes, SHA-256 %s)",
		r.url, filepath.Join(dir, r.archive.name), r.archive.size, r.archive.sha256, r.member, filePath, r.file.size, r.file.sha256)
}

// exists reports whether path exists; an error other than absence is returned.
func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, fmt.Errorf("data: %w", err)
}
