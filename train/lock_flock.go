//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package train

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lockRun takes the exclusive lock of the run directory dir: an flock of dir/LockFile,
// into which it writes this process's PID. The lock lasts until the returned function
// closes the file, or the process ends (the kernel drops the flocks of a dead process, so
// a crash leaves no stale lock). When another process holds it, the error wraps
// ErrRunInUse and names that process.
func lockRun(dir string, _ *slog.Logger) (func() error, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := tryLock(f); err != nil {
		f.Close()
		return nil, lockError(dir, path, err)
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if _, err := f.WriteAt(pid, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return f.Close, nil
}

// CheckLock returns an error wrapping ErrRunInUse, naming the process, when another
// process holds the lock of the run directory dir, and nil when none does or dir has no
// lock file. It takes no lock (Run.Train does): a program calls it to refuse a directory
// in use before it loads a corpus or a checkpoint.
func CheckLock(dir string) error {
	path := filepath.Join(dir, LockFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lock %s: %w", dir, err)
	}
	defer f.Close()
	if err := tryLock(f); err != nil {
		return lockError(dir, path, err)
	}
	return flock(f, syscall.LOCK_UN)
}

// tryLock takes an exclusive flock of f without waiting for a holder, but tries a few
// times over 0.1 s, so that another process's CheckLock, which holds the lock for an
// instant, does not make it fail.
func tryLock(f *os.File) error {
	var err error
	for i := range 5 {
		if i > 0 {
			time.Sleep(25 * time.Millisecond)
		}
		if err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
	}
	return err
}

// flock applies how to f, again when a signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// lockError is the error of a failed flock of the lock file path of dir, which names the
// holder's PID when another process holds it.
func lockError(dir, path string, err error) error {
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		return fmt.Errorf("lock %s: flock %s: %w", dir, path, err)
	}
	holder := "another process"
	if b, err := os.ReadFile(path); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			holder = "process " + strconv.Itoa(pid)
		}
	}
	return fmt.Errorf("%w: %s holds its lock %s (one process at a time trains in a run directory)", ErrRunInUse, holder, path)
}
