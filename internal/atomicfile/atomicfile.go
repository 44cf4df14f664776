// Package atomicfile writes files atomically: a reader of the file, or a
// process that starts after a crash, sees either the old content or the
// complete new content, never a partial write.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// bufferSize is the size of the buffer between write and the temporary file.
const bufferSize = 1 << 16

// Write creates or replaces the file at path with the bytes that write writes
// to the buffered writer it is given.
//
// The directories above path are created (mode 0755 before the umask) as
// needed. The bytes go to a temporary file in path's directory named
// "."+base+".*.partial", where base is the last element of path; that file is
// flushed, given mode 0644, synced, closed and renamed over path, and then the
// directory is synced so the rename is durable.
//
// On any error, including one returned by write, the temporary file is
// removed and an existing file at path is left untouched, except when only the
// final directory sync fails: path then already holds the new content, which
// may not survive a crash. A crash may leave the temporary file behind under
// its ".partial" name. An error returned by write is wrapped, so errors.Is and
// errors.As see it; every returned error names path.
func Write(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("atomicfile: writing %s: create directory: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.partial")
	if err != nil {
		return fmt.Errorf("atomicfile: writing %s: create temporary file: %w", path, err)
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if err != nil && !renamed {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, bufferSize)
	if err := write(bw); err != nil {
		return fmt.Errorf("%w (writing %s)", err, path)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("atomicfile: writing %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("atomicfile: writing %s: set mode of temporary file: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("atomicfile: writing %s: sync temporary file: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("atomicfile: writing %s: close temporary file: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("atomicfile: writing %s: %w", path, err)
	}
	renamed = true
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("atomicfile: writing %s: %w", path, err)
	}
	return nil
}

// syncDir flushes the entries of the directory dir to disk, so that a rename
// in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory to sync it: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// Temporaries returns the temporary files of Write(path, ...) in path's directory, in name order:
// the files named "."+base+"."+digits+".partial" (os.CreateTemp's random part is decimal
// digits), where base is the last element of path. Only a crash during Write leaves one
// behind, so while no Write of path is in progress every one of them is stale. A missing
// directory has none.
func Temporaries(path string) ([]string, error) {
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("atomicfile: temporaries of %s: %w", path, err)
	}
	prefix, suffix := "."+filepath.Base(path)+".", ".partial"
	var tmps []string
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, suffix) ||
			len(name) <= len(prefix)+len(suffix) {
			continue
		}
		if digits := name[len(prefix) : len(name)-len(suffix)]; strings.Trim(digits, "0123456789") == "" {
			tmps = append(tmps, filepath.Join(dir, name))
		}
	}
	return tmps, nil
}
