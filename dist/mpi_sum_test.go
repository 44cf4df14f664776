//go:build mpi

package dist

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hostsEnv names the command that TestMPISumTimes and cmd/train's MPIHosts tests launch
// their ranks with when it is set: mpirun with a hostfile of two nodes of one slot each,
// given -np 2 and the rest of the command line. dist/twohosts.sh sets it to mpirun across
// two network namespaces joined by a veth pair.
const hostsEnv = "LIPFORMER_MPIRUN_HOSTS"

// sumRepsEnv sets the number of timed calls of each size in TestMPISumTimes (default 5).
const sumRepsEnv = "LIPFORMER_SUM_REPS"

// sumSizes are the float32 counts of TestMPISumTimes: one number, like the reductions of
// the stop flag and the loss in every step, then sizes up to the gradient of the P3
// preset in the l2 architecture, 4,536,320 parameters (docs/distributed.md, "The cost of
// the all-reduce").
var sumSizes = []int{1, 1 << 10, 1 << 16, 1 << 20, 4_536_320}

// sumLine starts the lines in which rank 0 of TestMPISumTimes reports its times.
const sumLine = "allreduce: "

// TestMPISumTimes runs this test binary as 2 ranks, one on each node of $LIPFORMER_MPIRUN_HOSTS
// when it is set, else under mpirun on this machine, which sum float32 buffers of
// sumSizes elements, check every element of the sums, and time each call after a barrier;
// it logs rank 0's times (min, median, max per size).
func TestMPISumTimes(t *testing.T) {
	if os.Getenv(workerEnv) == "1" {
		mpiSumTimes(t)
		return
	}
	launch := []string{os.Getenv(hostsEnv)}
	where := "two nodes (" + hostsEnv + ")"
	if launch[0] == "" {
		mpirun, err := exec.LookPath("mpirun")
		if err != nil {
			t.Skipf("no mpirun (%v): install openmpi-bin to test the MPI binding", err)
		}
		launch = []string{mpirun, "--oversubscribe", "--allow-run-as-root"}
		where = "one machine"
	}
	launch = append(launch, "-np", "2", "-x", workerEnv+"=1")
	if reps := os.Getenv(sumRepsEnv); reps != "" {
		launch = append(launch, "-x", sumRepsEnv+"="+reps)
	}
	out := runRanks(t, launch, "^TestMPISumTimes$")
	if n := strings.Count(out, "--- PASS: TestMPISumTimes"); n != 2 {
		t.Fatalf("%d of 2 ranks passed\n%s", n, out)
	}
	var lines []string
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, sumLine) {
			lines = append(lines, strings.TrimPrefix(strings.TrimSpace(line), sumLine))
		}
	}
	if len(lines) != len(sumSizes) {
		t.Fatalf("rank 0 reported %d times, want one line for each of %d sizes\n%s", len(lines), len(sumSizes), out)
	}
	t.Logf("float32 sums over 2 ranks on %s:\n%s", where, strings.Join(lines, "\n"))
}

// mpiSumTimes is one rank of TestMPISumTimes. Rank r's element i is (i mod 7) * (r+1) + rep,
// whose sum over n ranks, (i mod 7) * n(n+1)/2 + n*rep, float32 holds exactly; a wrong
// element fails the rank, which exits without finalizing.
func mpiSumTimes(t *testing.T) {
	reps := 5
	if s := os.Getenv(sumRepsEnv); s != "" {
		var err error
		if reps, err = strconv.Atoi(s); err != nil || reps < 1 {
			t.Fatalf("%s=%q, want a count >= 1", sumRepsEnv, s)
		}
	}
	c, err := Init()
	if err != nil {
		t.Fatal(err)
	}
	r, n := c.Rank(), c.Size()
	for _, size := range sumSizes {
		buf := make([]float32, size)
		times := make([]time.Duration, reps)
		for rep := range reps {
			for i := range buf {
				buf[i] = float32((i%7)*(r+1) + rep)
			}
			if err := c.Barrier(); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if err := Sum(c, buf); err != nil {
				t.Fatal(err)
			}
			times[rep] = time.Since(start)
			for i, v := range buf {
				if want := float32((i%7)*n*(n+1)/2 + n*rep); v != want {
					t.Errorf("rank %d: call %d of %d elements: element %d is %v, want %v", r, rep, size, i, v, want)
					os.Exit(1)
				}
			}
		}
		if r == 0 {
			slices.Sort(times)
			bytes := 4 * size
			fmt.Printf("%s%9d float32 (%s): min %s, median %s, max %s over %d calls; %.2f GB/s at the median\n",
				sumLine, size, sizeName(bytes), ms(times[0]), ms(times[reps/2]), ms(times[reps-1]), reps,
				float64(bytes)/times[reps/2].Seconds()/1e9)
		}
	}
	if err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
}

// ms formats d in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", d.Seconds()*1e3) }

// sizeName is a byte count in B, kB or MB (powers of 1000).
func sizeName(b int) string {
	switch {
	case b >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(b)/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(b)/1e3)
	}
	return fmt.Sprintf("%d B", b)
}
