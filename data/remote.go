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
	"strings"
)

// remoteCorpus is a corpus file that lives in the data directory and is
// downloaded there when missing, either directly or inside a zip archive.
type remoteCorpus struct {
	file    checkedFile  // the corpus itself
	archive *checkedFile // the zip archive that url serves, or nil when url serves file
	member  string       // the name of file inside archive
	url     string
	// folders are subfolders of the data directory where file and archive may
	// also be, after the data directory itself: "enwik8" for the common layout
	// D/enwik8/enwik8 (beside D/enwik8/enwik7).
	folders []string
}

// ensure returns the path of the corpus file in dir or in one of r.folders,
// the first found, after creating it if it is missing everywhere: from the
// archive when one of those places has it, else from a download. A path that
// is a directory is passed over. An archive found is verified before use. The
// corpus file's own content is left for the caller to verify as it reads it.
// When the download fails, the error names every path that was looked for.
func (r remoteCorpus) ensure(ctx context.Context, dir string, progress io.Writer, log *slog.Logger) (string, error) {
	places := []string{dir}
	for _, f := range r.folders {
		places = append(places, filepath.Join(dir, f))
	}
	var looked []string
	home := "" // where a missing corpus file is made: the first place where its path is not a directory
	for _, p := range places {
		path := filepath.Join(p, r.file.name)
		isDir, found, err := lookFor(path)
		switch {
		case err != nil:
			return "", err
		case found:
			return path, nil
		case isDir:
			looked = append(looked, path+" (a directory)")
		default:
			looked = append(looked, path)
			if home == "" {
				home = p
			}
		}
	}
	if home == "" {
		return "", fmt.Errorf("data: corpus file %s is not a regular file: it is a directory (looked for %s)",
			filepath.Join(dir, r.file.name), strings.Join(looked, ", "))
	}
	path := filepath.Join(home, r.file.name)
	if r.archive == nil {
		if err := r.download(ctx, home, r.file, progress, log); err != nil {
			return "", notFound(looked, err)
		}
		return path, nil
	}
	zipPath := ""
	for _, p := range places {
		candidate := filepath.Join(p, r.archive.name)
		isDir, found, err := lookFor(candidate)
		if err != nil {
			return "", err
		}
		if found {
			zipPath = candidate
			break
		}
		if isDir {
			candidate += " (a directory)"
		}
		looked = append(looked, candidate)
	}
	if zipPath != "" {
		log.Info("verifying archive", "path", zipPath)
		if err := verifyFile(zipPath, *r.archive); err != nil {
			return "", fmt.Errorf("%w (remove it to download it again)", err)
		}
	} else {
		if err := r.download(ctx, home, *r.archive, progress, log); err != nil {
			return "", notFound(looked, err)
		}
		zipPath = filepath.Join(home, r.archive.name)
	}
	log.Info("extracting", "archive", zipPath, "member", r.member, "path", path)
	if err := extractMember(zipPath, r.member, path, r.file, progress); err != nil {
		return "", err
	}
	return path, nil
}

// lookFor reports whether path is a directory, or exists and is not one; an
// error other than its absence is returned.
func lookFor(path string) (isDir, found bool, err error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, false, nil
	case err != nil:
		return false, false, fmt.Errorf("data: %w", err)
	}
	return st.IsDir(), !st.IsDir(), nil
}

// notFound is the error of a corpus that none of the paths looked for holds
// and whose download failed with err.
func notFound(looked []string, err error) error {
	return fmt.Errorf("data: looked for %s: none exists, and the download failed: %w", strings.Join(looked, ", "), err)
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
