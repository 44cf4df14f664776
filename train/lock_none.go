//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package train

import (
	"log/slog"
	"runtime"
)

// lockRun would lock the run directory dir; locking needs flock(2), which this system
// lacks (Windows, Solaris, AIX, Plan 9, WebAssembly), so here it logs that the directory
// is unlocked and returns a function that does nothing.
func lockRun(dir string, log *slog.Logger) (func() error, error) {
	log.Warn("run directory locking is unavailable on "+runtime.GOOS+": nothing stops a second process from training in the same directory", "dir", dir)
	return func() error { return nil }, nil
}

// CheckLock reports whether another process holds the lock of the run directory dir; as
// locking needs flock(2), which this system lacks, here it always returns nil.
func CheckLock(dir string) error { return nil }
