package data

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// writeAtomic creates dst, and the directories above it, with the bytes that
// fill writes. The bytes go to a temporary file in dst's directory that is
// synced and then renamed to dst, so dst appears only complete: when fill
// fails, or the process dies, there is no dst and the temporary file is
// removed (or, after a crash, left under a name that ends in ".partial").
func writeAtomic(dst string, fill func(w io.Writer) error) (err error) {
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("data: create directory for %s: %w", dst, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(dst)+".*.partial")
	if err != nil {
		return fmt.Errorf("data: create temporary file for %s: %w", dst, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := fill(tmp); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("data: set permissions of %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("data: sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("data: close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("data: rename %s to %s: %w", tmp.Name(), dst, err)
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("data: open directory %s to sync it: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("data: sync directory %s: %w", dir, err)
	}
	return nil
}
