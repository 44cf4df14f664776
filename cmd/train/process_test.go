//go:build linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lipformer/train"
)

// These tests run the train program as real processes: built into a temporary directory,
// started, signalled and waited for.

// processTimeout bounds every wait for a process, on a machine that may be busy.
const processTimeout = 3 * time.Minute

// buildTrain builds this program into a temporary directory, or skips the test when there
// is no go tool.
func buildTrain(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to build cmd/train with (%v): skipping a test of real train processes", err)
	}
	bin := filepath.Join(t.TempDir(), "train")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -o %s .: %v\n%s", bin, err, out)
	}
	return bin
}

// process is a started train process.
type process struct {
	cmd            *exec.Cmd
	stdout, stderr string // files
	done           chan struct{}
}

// startTrain starts bin with args, its output going to files; the test's end kills it if
// it still runs.
func startTrain(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	dir := t.TempDir()
	p := &process{cmd: exec.Command(bin, args...), stdout: filepath.Join(dir, "stdout"), stderr: filepath.Join(dir, "stderr"),
		done: make(chan struct{})}
	so, err := os.Create(p.stdout)
	if err != nil {
		t.Fatal(err)
	}
	se, err := os.Create(p.stderr)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout, p.cmd.Stderr = so, se
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		so.Close()
		se.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// pid is the process's PID as a string.
func (p *process) pid() string { return strconv.Itoa(p.cmd.Process.Pid) }

// wait waits for the process to end and returns its exit status.
func (p *process) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(processTimeout):
		t.Fatalf("train %v still runs after %v", p.cmd.Args[1:], processTimeout)
	}
	return p.cmd.ProcessState.ExitCode()
}

// output reads what the process wrote to the file.
func (p *process) output(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitForTraining waits until the metrics log of the run in out has a training row.
func waitForTraining(t *testing.T, out string, p *process) {
	t.Helper()
	deadline := time.Now().Add(processTimeout)
	for time.Now().Before(deadline) {
		if m, err := train.ReadMetrics(filepath.Join(out, train.MetricsFile)); err == nil && len(m.Train) > 0 {
			return
		}
		select {
		case <-p.done:
			t.Fatalf("train ended before it trained: exit status %d\n%s", p.cmd.ProcessState.ExitCode(), p.output(t, p.stderr))
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("no training row in %s after %v", out, processTimeout)
}

// checkOneWriter checks two train processes started together on the run directory out:
// one must be refused, naming the other's PID, while the other trains on (until the
// SIGINT it is sent then), and the metrics log must hold every step once.
func checkOneWriter(t *testing.T, out string, a, b *process) {
	t.Helper()
	var refused, holder *process
	select {
	case <-a.done:
		refused, holder = a, b
	case <-b.done:
		refused, holder = b, a
	case <-time.After(processTimeout):
		t.Fatalf("neither of two train processes on %s ended within %v", out, processTimeout)
	}
	if code := refused.cmd.ProcessState.ExitCode(); code == 0 {
		t.Errorf("two train processes on %s: the first to end exited 0, want it refused", out)
	}
	if msg := refused.output(t, refused.stderr); !strings.Contains(msg, "process "+holder.pid()) || !strings.Contains(msg, out) {
		t.Errorf("stderr of the second process:\n%s\nwant an error naming %s and the holder, process %s", msg, out, holder.pid())
	}
	select {
	case <-holder.done:
		t.Fatalf("the holder of %s ended before it was interrupted: exit status %d", out, holder.cmd.ProcessState.ExitCode())
	default:
	}
	holder.cmd.Process.Signal(syscall.SIGINT)
	if code := holder.wait(t); code != 130 {
		t.Errorf("the holder exited %d after SIGINT, want 130\n%s", code, holder.output(t, holder.stderr))
	}
	m, err := train.ReadMetrics(filepath.Join(out, train.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range m.Train {
		if row.Step != i {
			t.Fatalf("train row %d of %s is of step %d: two processes wrote the log", i, train.MetricsFile, row.Step)
		}
	}
}

// TestSecondTrainOnOneOutIsRefused: of two train processes started together on one -out,
// one trains and the other is refused with a message naming the first's PID.
func TestSecondTrainOnOneOutIsRefused(t *testing.T) {
	bin := buildTrain(t)
	data, out := corpusFile(t), filepath.Join(t.TempDir(), "run")
	args := append(tinyArgs(data, out), "-steps", "50000", "-eval-every", "100", "-sample", "0")
	checkOneWriter(t, out, startTrain(t, bin, args...), startTrain(t, bin, args...))
}

// TestSecondResumeOfOneRunIsRefused: of two -resume processes started together on one run,
// one trains and the other is refused with a message naming the first's PID.
func TestSecondResumeOfOneRunIsRefused(t *testing.T) {
	bin := buildTrain(t)
	data, out := corpusFile(t), filepath.Join(t.TempDir(), "run")
	first := startTrain(t, bin, append(tinyArgs(data, out), "-steps", "6", "-eval-every", "100", "-sample", "0")...)
	if code := first.wait(t); code != 0 {
		t.Fatalf("first session exited %d\n%s", code, first.output(t, first.stderr))
	}
	args := []string{"-resume", out, "-steps", "50000", "-sample", "0"}
	checkOneWriter(t, out, startTrain(t, bin, args...), startTrain(t, bin, args...))
}

// TestSignalsExitNonZero: SIGINT and SIGTERM save a checkpoint and exit 130 and 143, and
// the summary leaves the final scores, which were not measured, null.
func TestSignalsExitNonZero(t *testing.T) {
	bin := buildTrain(t)
	for _, c := range []struct {
		sig  syscall.Signal
		want int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			data, out := corpusFile(t), filepath.Join(t.TempDir(), "run")
			p := startTrain(t, bin, append(tinyArgs(data, out), "-steps", "1000000", "-eval-every", "100", "-sample", "0")...)
			waitForTraining(t, out, p)
			if err := p.cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(t); code != c.want {
				t.Errorf("exit status %d after %v, want %d\n%s", code, c.sig, c.want, p.output(t, p.stderr))
			}
			if s := p.output(t, p.stdout); !strings.Contains(s, "interrupted: resume with -resume "+out) {
				t.Errorf("stdout:\n%s\nwant it to say how to resume", s)
			}
			b, err := os.ReadFile(filepath.Join(out, train.SummaryFile))
			if err != nil {
				t.Fatal(err)
			}
			var fields map[string]any
			if err := json.Unmarshal(b, &fields); err != nil {
				t.Fatal(err)
			}
			if fields["interrupted"] != true {
				t.Errorf("summary.json interrupted = %v, want true", fields["interrupted"])
			}
			for _, name := range []string{"final_val_bpc", "test_bpc"} {
				if v, ok := fields[name]; ok && v != nil {
					t.Errorf("summary.json %s = %v after %v, want null or absent", name, v, c.sig)
				}
			}
			if _, err := os.Stat(filepath.Join(out, train.LatestFile)); err != nil {
				t.Errorf("no checkpoint after %v: %v", c.sig, err)
			}
		})
	}
}
