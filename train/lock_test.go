//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package train

import (
	"context"
	"errors"
	"lipformer/spec"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRunDirectoryLock: while the lock of a run directory is held, taking it again,
// CheckLock and Train all fail with ErrRunInUse naming the holder's PID, and Train writes
// nothing; once it is released, the directory is free again.
func TestRunDirectoryLock(t *testing.T) {
	dir := t.TempDir()
	if err := CheckLock(dir); err != nil {
		t.Fatalf("CheckLock of a directory without a lock file: %v", err)
	}
	unlock, err := lockRun(dir, quiet())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, LockFile))
	pid := strconv.Itoa(os.Getpid())
	if err != nil || strings.TrimSpace(string(b)) != pid {
		t.Fatalf("lock file holds %q (%v), want the PID %s", b, err, pid)
	}
	c := smallCorpus(t)
	o := smallOptions(2)
	o.Warmup = 0
	r := &Run{Model: smallModel(t, c, spec.DP, spec.Float32, 1), Corpus: c, Opt: o, Out: dir, Log: quiet()}
	_, errTrain := r.Train(context.Background())
	_, errLock := lockRun(dir, quiet())
	for name, err := range map[string]error{"lockRun": errLock, "CheckLock": CheckLock(dir), "Train": errTrain} {
		if !errors.Is(err, ErrRunInUse) || !strings.Contains(err.Error(), "process "+pid) || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s of a locked directory: %v, want ErrRunInUse naming %s and process %s", name, err, dir, pid)
		}
	}
	if exists(t, filepath.Join(dir, MetricsFile)) {
		t.Errorf("Train refused a locked directory but wrote %s", MetricsFile)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	if err := CheckLock(dir); err != nil {
		t.Errorf("CheckLock after the holder released the lock: %v", err)
	}
	unlock, err = lockRun(dir, quiet())
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	unlock()
}

// TestRestartWaitsForTheLock: a restart of a run that crashed before its first checkpoint
// removes its metrics log only once it holds the directory's lock: while another process
// holds it, the log stays.
func TestRestartWaitsForTheLock(t *testing.T) {
	dir := t.TempDir()
	metrics := filepath.Join(dir, MetricsFile)
	if err := os.WriteFile(metrics, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockRun(dir, quiet())
	if err != nil {
		t.Fatal(err)
	}
	c := smallCorpus(t)
	o := smallOptions(2)
	o.Warmup = 0
	r := &Run{Model: smallModel(t, c, spec.DP, spec.Float32, 1), Corpus: c, Opt: o, Out: dir, Log: quiet(), Restart: true}
	if _, err := r.Train(context.Background()); !errors.Is(err, ErrRunInUse) {
		t.Errorf("restart in a locked directory: %v, want ErrRunInUse", err)
	}
	if !exists(t, metrics) {
		t.Errorf("the refused restart removed %s", MetricsFile)
	}
	unlock()
	if _, err := r.Train(context.Background()); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if m, err := ReadMetrics(metrics); err != nil || len(m.Train) != 2 {
		t.Errorf("restarted log: %d training rows, %v; want 2", len(m.Train), err)
	}
}
