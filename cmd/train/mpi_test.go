//go:build mpi && linux

package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lipformer/model"
	"lipformer/train"
)

// These tests run train built with -tags mpi as replicas under mpirun (docs/distributed.md)
// and compare them with one process training on the whole batch.

// replicaTol bounds the difference of a loss, gradient norm or weight of replicas from
// one process: they sum the same terms in another order.
const replicaTol = 1e-6

// mpiTrain returns the mpirun command and train built with -tags mpi, or skips the test
// when either cannot be had.
func mpiTrain(t *testing.T) (mpirun, bin string) {
	t.Helper()
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skipf("no mpirun (%v): install openmpi-bin to test training over MPI", err)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to build cmd/train with (%v)", err)
	}
	bin = filepath.Join(t.TempDir(), "train")
	if out, err := exec.Command(goTool, "build", "-tags", "mpi", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags mpi -o %s .: %v\n%s", bin, err, out)
	}
	return mpirun, bin
}

// job is the command line of n replicas of bin with args: bin itself when n is 1, else
// under mpirun, each replica on one thread.
func job(mpirun, bin string, n int, args ...string) []string {
	if n == 1 {
		return append([]string{bin}, args...)
	}
	return append([]string{mpirun, "--oversubscribe", "--allow-run-as-root", "-np", strconv.Itoa(n), "-x", "GOMAXPROCS=1", bin}, args...)
}

// runJob runs the command line and returns its standard output, failing the test when it
// fails.
func runJob(t *testing.T, cmdline []string) string {
	t.Helper()
	p := startTrain(t, cmdline[0], cmdline[1:]...)
	if code := p.wait(t); code != 0 {
		t.Fatalf("%s: exit status %d\n%s", strings.Join(cmdline, " "), code, p.output(t, p.stderr))
	}
	return p.output(t, p.stdout)
}

// replicaArgs are the flags of a tiny float64 model with a batch of 4 sequences, trained to
// steps, written to out; the learning rate is constant after the warm-up, so that a run of
// 15 steps resumed to 30 follows the schedule of 30 (a cosine decays over -steps).
func replicaArgs(data, out string, steps int) []string {
	return []string{"-data", data, "-layers", "1", "-width", "16", "-heads", "2", "-ctx", "16", "-batch", "4",
		"-dtype", "float64", "-schedule", "constant", "-warmup", "5", "-eval-every", "5", "-eval-bytes", "300", "-steps", strconv.Itoa(steps), "-out", out,
		"-json", "-sample", "0"}
}

// TestMPIReplicasTrainAsOneProcess: two replicas with two sequences each give the losses,
// gradient norms, validations and final weights of one process with the batch of four, and
// so do runs resumed at step 15 with the same or the other number of processes; the
// replicas print one summary.
func TestMPIReplicasTrainAsOneProcess(t *testing.T) {
	mpirun, bin := mpiTrain(t)
	data, dir := corpusFile(t), t.TempDir()
	want := filepath.Join(dir, "one")
	runJob(t, job(mpirun, bin, 1, replicaArgs(data, want, 30)...))
	straight := filepath.Join(dir, "two")
	stdout := runJob(t, job(mpirun, bin, 2, replicaArgs(data, straight, 30)...))
	checkOneSummary(t, stdout, 30)
	compareRuns(t, "2 replicas", want, straight)
	for _, c := range []struct{ first, then int }{{2, 2}, {1, 2}, {2, 1}} {
		out := filepath.Join(dir, fmt.Sprintf("resumed-%d-%d", c.first, c.then))
		runJob(t, job(mpirun, bin, c.first, replicaArgs(data, out, 15)...))
		stdout := runJob(t, job(mpirun, bin, c.then, "-resume", out, "-steps", "30", "-json", "-sample", "0"))
		checkOneSummary(t, stdout, 30)
		compareRuns(t, fmt.Sprintf("15 steps as %d replica(s), resumed to 30 as %d", c.first, c.then), want, out)
	}
}

// checkOneSummary checks that stdout is one JSON summary of a run of steps steps.
func checkOneSummary(t *testing.T, stdout string, steps int) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	var sum train.Summary
	if err := dec.Decode(&sum); err != nil {
		t.Fatalf("stdout is no JSON summary: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Errorf("stdout holds more than one summary: the replicas other than rank 0 printed\n%s", stdout)
	}
	if sum.Steps != steps || !sum.TestBPC.Measured() {
		t.Errorf("summary of %d steps, test bpc %v; want %d steps and a test score", sum.Steps, sum.TestBPC, steps)
	}
}

// compareRuns checks that the run directory got has the training and validation rows and
// the final weights of want, to replicaTol.
func compareRuns(t *testing.T, name, want, got string) {
	t.Helper()
	var worst float64 // the largest difference seen
	near := func(a, b float64) bool {
		worst = max(worst, math.Abs(a-b))
		return math.Abs(a-b) <= replicaTol
	}
	defer func() { t.Logf("%s: largest difference from one process %.3g", name, worst) }()
	mw, mg := readMetrics(t, want), readMetrics(t, got)
	if len(mg.Train) != len(mw.Train) || len(mg.Eval) != len(mw.Eval) {
		t.Fatalf("%s: %d training and %d validation rows, want %d and %d", name, len(mg.Train), len(mg.Eval), len(mw.Train), len(mw.Eval))
	}
	for i, w := range mw.Train {
		g := mg.Train[i]
		if g.Step != w.Step || !near(g.Loss, w.Loss) || !near(g.GradNorm, w.GradNorm) {
			t.Errorf("%s: step %d loss %v gradient norm %v, want step %d loss %v norm %v", name, g.Step, g.Loss, g.GradNorm, w.Step, w.Loss, w.GradNorm)
		}
	}
	for i, w := range mw.Eval {
		if g := mg.Eval[i]; g.Step != w.Step || !near(g.ValLoss, w.ValLoss) {
			t.Errorf("%s: validation at step %d %v, want at step %d %v", name, g.Step, g.ValLoss, w.Step, w.ValLoss)
		}
	}
	pw, pg := weights(t, want), weights(t, got)
	for param, w := range pw {
		g := pg[param]
		if len(g) != len(w) {
			t.Fatalf("%s: parameter %s has %d elements, want %d", name, param, len(g), len(w))
		}
		for i := range w {
			if !near(g[i], w[i]) {
				t.Fatalf("%s: parameter %s element %d is %v, want %v", name, param, i, g[i], w[i])
			}
		}
	}
}

// readMetrics reads the metrics log of the run directory dir.
func readMetrics(t *testing.T, dir string) train.Metrics {
	t.Helper()
	m, err := train.ReadMetrics(filepath.Join(dir, train.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// weights reads the float64 parameters of the latest checkpoint of dir by name.
func weights(t *testing.T, dir string) map[string][]float64 {
	t.Helper()
	m, _, err := model.Load(filepath.Join(dir, train.LatestFile))
	if err != nil {
		t.Fatal(err)
	}
	w := map[string][]float64{}
	for _, p := range m.Params() {
		v, ok := p.Value.Data().([]float64)
		if !ok {
			t.Fatalf("parameter %s holds %T, want []float64", p.Name, p.Value.Data())
		}
		w[p.Name] = v
	}
	if len(w) == 0 {
		t.Fatalf("%s: no parameters", dir)
	}
	return w
}

// longJob starts two replicas of a run in out that trains for far longer than a test
// lasts and waits until it has trained a step.
func longJob(t *testing.T, mpirun, bin, out string) *process {
	t.Helper()
	args := append(replicaArgs(corpusFile(t), out, 1_000_000), "-eval-every", "100000")
	p := startTrain(t, mpirun, job(mpirun, bin, 2, args...)[1:]...)
	waitForTraining(t, out, p)
	return p
}

// ranks returns the PIDs of the processes whose parent is the process of p: the replicas
// mpirun started.
func ranks(t *testing.T, p *process) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the process ended
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(p.cmd.Process.Pid) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			pids = append(pids, pid)
		}
	}
	if len(pids) != 2 {
		t.Fatalf("mpirun %d has %d child processes, want 2 replicas: %v", p.cmd.Process.Pid, len(pids), pids)
	}
	return pids
}

// TestMPISignalledReplicaStopsTheJob: SIGTERM to one replica stops both at the same step;
// rank 0 saves the checkpoint and an interrupted summary, and the run resumes from it.
func TestMPISignalledReplicaStopsTheJob(t *testing.T) {
	mpirun, bin := mpiTrain(t)
	out := filepath.Join(t.TempDir(), "run")
	p := longJob(t, mpirun, bin, out)
	if err := syscall.Kill(ranks(t, p)[1], syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code == 0 {
		t.Errorf("mpirun exited 0 after a replica was sent SIGTERM, want the replica's 143")
	}
	b, err := os.ReadFile(filepath.Join(out, train.SummaryFile))
	if err != nil {
		t.Fatalf("no summary after SIGTERM: %v\n%s", err, p.output(t, p.stderr))
	}
	var sum train.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if !sum.Interrupted || sum.Steps < 1 {
		t.Fatalf("summary after SIGTERM: interrupted %t at step %d, want interrupted after a step", sum.Interrupted, sum.Steps)
	}
	if m := readMetrics(t, out); len(m.Train) != sum.Steps {
		t.Errorf("%d training rows, want the %d steps of the summary", len(m.Train), sum.Steps)
	}
	stdout := runJob(t, job(mpirun, bin, 2, "-resume", out, "-steps", strconv.Itoa(sum.Steps+3), "-json", "-sample", "0"))
	checkOneSummary(t, stdout, sum.Steps+3)
}

// TestMPIKilledReplicaEndsTheJob: when one replica dies (SIGKILL: no chance to say so),
// mpirun ends the other, which waits for it in an all-reduce, and exits non-zero.
func TestMPIKilledReplicaEndsTheJob(t *testing.T) {
	mpirun, bin := mpiTrain(t)
	p := longJob(t, mpirun, bin, filepath.Join(t.TempDir(), "run"))
	if err := syscall.Kill(ranks(t, p)[1], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if code := p.wait(t); code == 0 {
		t.Errorf("mpirun exited 0 after a replica was killed")
	}
	t.Logf("the job ended %v after a replica was killed", time.Since(start).Round(time.Millisecond))
}
