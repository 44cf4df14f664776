//go:build mpi && linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"lipformer/model"
	"lipformer/train"
)

// These tests run the replicas of train on two nodes: under the command named by
// $LIPFORMER_MPIRUN_HOSTS, mpirun with a hostfile of two nodes of one slot each.
// dist/twohosts.sh sets it to mpirun across two network namespaces joined by a veth pair
// (TCP between them, mpirun in the first, the second's daemon started through a stand-in
// for ssh); without it they are skipped.

// hostsEnv names the command that launches replicas on two nodes.
const hostsEnv = "LIPFORMER_MPIRUN_HOSTS"

// killTimeout bounds the time from the kill of a replica to the end of the job (about 2 s
// measured, docs/distributed.md).
const killTimeout = time.Minute

// hostsTrain returns the command that launches replicas on two nodes and train built with
// -tags mpi, or skips the test when the command is not given.
func hostsTrain(t *testing.T) (launch, bin string) {
	t.Helper()
	launch = os.Getenv(hostsEnv)
	if launch == "" {
		t.Skipf("%s is not set: dist/twohosts.sh runs this test on two network namespaces", hostsEnv)
	}
	_, bin = mpiTrain(t)
	return launch, bin
}

// hostsJob is the command line of 2 replicas of bin with args, one on each node, each on
// one thread.
func hostsJob(launch, bin string, args ...string) []string {
	return append([]string{launch, "-np", "2", "-x", "GOMAXPROCS=1", bin}, args...)
}

// TestMPIHosts runs the replicas of train on two nodes; its subtests share one build.
func TestMPIHosts(t *testing.T) {
	launch, bin := hostsTrain(t)
	t.Run("TrainAsOneProcess", func(t *testing.T) { hostsTrainAsOneProcess(t, launch, bin) })
	t.Run("KilledNodeResumes", func(t *testing.T) { hostsKilledNodeResumes(t, launch, bin) })
}

// hostsTrainAsOneProcess: two replicas on two nodes with two sequences each give the
// losses, gradient norms, validations and final weights of one process with the batch of
// four, and print one summary.
func hostsTrainAsOneProcess(t *testing.T, launch, bin string) {
	data, dir := corpusFile(t), t.TempDir()
	want, got := filepath.Join(dir, "one"), filepath.Join(dir, "two-nodes")
	runJob(t, job("", bin, 1, replicaArgs(data, want, 30)...))
	stdout := runJob(t, hostsJob(launch, bin, replicaArgs(data, got, 30)...))
	checkOneSummary(t, stdout, 30)
	compareRuns(t, "2 replicas on two nodes", want, got)
}

// hostsKilledNodeResumes: SIGKILL to the replica on the second node (in another network
// namespace than mpirun) after the run has saved a checkpoint past step 0 ends the job,
// every replica with it, within killTimeout; the run directory resumes on the two nodes
// and ends as one process trained straight to the same step.
func hostsKilledNodeResumes(t *testing.T, launch, bin string) {
	data, dir := corpusFile(t), t.TempDir()
	out := filepath.Join(dir, "killed")
	p := startTrain(t, launch, hostsJob(launch, bin, replicaArgs(data, out, 1_000_000)...)[1:]...)
	at := waitForCheckpoint(t, out, p, 10)
	pids := rankPIDs(t, bin)
	mine, err := netns(p.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	var remote []int
	for _, pid := range pids {
		if ns, err := netns(pid); err == nil && ns != mine {
			remote = append(remote, pid)
		}
	}
	if len(pids) != 2 || len(remote) != 1 {
		t.Fatalf("%d replicas of %s, %d of them in a network namespace other than mpirun's (%s); want 2, one on each node", len(pids), bin, len(remote), mine)
	}
	if err := syscall.Kill(remote[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	select {
	case <-p.done:
	case <-time.After(killTimeout):
		t.Fatalf("the job still runs %v after its replica on the second node was killed\n%s", killTimeout, p.output(t, p.stderr))
	}
	code := p.cmd.ProcessState.ExitCode()
	t.Logf("checkpoint of step %d; the job ended %v after the replica on the second node was killed, exit status %d",
		at, time.Since(start).Round(time.Millisecond), code)
	if code == 0 {
		t.Errorf("mpirun exited 0 after a replica was killed")
	}
	for deadline := time.Now().Add(10 * time.Second); len(rankPIDs(t, bin)) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("replicas %v still run 10 s after mpirun ended", rankPIDs(t, bin))
		}
	}

	m := readMetrics(t, out)
	if len(m.Train) == 0 {
		t.Fatalf("no training rows in %s", out)
	}
	steps := m.Train[len(m.Train)-1].Step + 6 // past the last step logged, which may be past the checkpoint
	stdout := runJob(t, hostsJob(launch, bin, "-resume", out, "-steps", strconv.Itoa(steps), "-json", "-sample", "0"))
	checkOneSummary(t, stdout, steps)
	want := filepath.Join(dir, "one")
	runJob(t, job("", bin, 1, replicaArgs(data, want, steps)...))
	compareRuns(t, fmt.Sprintf("killed after the checkpoint of step %d, resumed to step %d on two nodes", at, steps), want, out)
}

// waitForCheckpoint waits until the latest checkpoint of the run in out is of step least
// or later, and returns its step.
func waitForCheckpoint(t *testing.T, out string, p *process, least int) int {
	t.Helper()
	deadline := time.Now().Add(processTimeout)
	for time.Now().Before(deadline) {
		if _, ck, err := model.Load(filepath.Join(out, train.LatestFile)); err == nil {
			if step, err := ck.MetaInt(train.MetaStep); err == nil && step >= least {
				return step
			}
		}
		select {
		case <-p.done:
			t.Fatalf("train ended before a checkpoint of step %d: exit status %d\n%s", least, p.cmd.ProcessState.ExitCode(), p.output(t, p.stderr))
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("no checkpoint of step %d in %s after %v", least, out, processTimeout)
	return 0
}

// rankPIDs returns the PIDs of the processes that run the executable bin.
func rankPIDs(t *testing.T, bin string) []int {
	t.Helper()
	bin, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	exes, err := filepath.Glob("/proc/[0-9]*/exe")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range exes {
		if exe, err := os.Readlink(f); err == nil && exe == bin {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// netns names the network namespace of the process pid (as "net:[inode]").
func netns(pid int) (string, error) {
	return os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
}
