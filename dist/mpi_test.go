//go:build mpi

package dist

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// workerEnv, set to 1, makes the test binary one of the ranks of TestMPICollectives.
const workerEnv = "LIPFORMER_DIST_WORKER"

// TestMPICollectives runs this test binary as 3 ranks under mpirun, each of which checks
// the collective calls (mpiCollectives); it is skipped where mpirun is absent.
func TestMPICollectives(t *testing.T) {
	if os.Getenv(workerEnv) == "1" {
		mpiCollectives(t)
		return
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skipf("no mpirun (%v): install openmpi-bin to test the MPI binding", err)
	}
	out := runRanks(t, []string{mpirun, "--oversubscribe", "--allow-run-as-root", "-np", "3", "-x", workerEnv + "=1"},
		"^TestMPICollectives$")
	if n := strings.Count(out, "--- PASS: TestMPICollectives"); n != 3 {
		t.Fatalf("%d of 3 ranks passed\n%s", n, out)
	}
}

// runRanks runs this test binary under the mpirun command line launch (which must pass
// workerEnv=1 to the ranks with -x) as ranks of the tests that match run, and returns their
// output; it fails the test when mpirun fails or still runs after 3 minutes.
func runRanks(t *testing.T, launch []string, run string) string {
	t.Helper()
	cmd := exec.Command(launch[0], append(launch[1:], os.Args[0], "-test.run", run, "-test.v")...)
	cmd.Env = append(os.Environ(), workerEnv+"=1")
	done := make(chan struct{})
	var out []byte
	var err error
	go func() {
		out, err = cmd.CombinedOutput()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s still ran after 3 minutes\n%s", strings.Join(launch, " "), out)
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(launch, " "), err, out)
	}
	return string(out)
}

// mpiCollectives is one rank of TestMPICollectives: it checks rank and size, sums of both
// precisions, a broadcast from each root and a barrier, then finalizes. A failing rank
// exits without finalizing, which makes mpirun end the job.
func mpiCollectives(t *testing.T) {
	c, err := Init()
	if err != nil {
		t.Fatal(err)
	}
	r, n := c.Rank(), c.Size()
	if n != 3 || r < 0 || r >= n {
		t.Fatalf("rank %d of %d, want one of 3", r, n)
	}
	f64 := []float64{float64(r), 1, float64(r * r)}
	if err := Sum(c, f64); err != nil {
		t.Fatal(err)
	}
	if want := []float64{3, 3, 5}; !slices.Equal(f64, want) {
		t.Errorf("rank %d: float64 sum %v, want %v", r, f64, want)
	}
	f32 := []float32{0.5 * float32(r+1), -1}
	if err := Sum(c, f32); err != nil {
		t.Fatal(err)
	}
	if want := []float32{3, -3}; !slices.Equal(f32, want) {
		t.Errorf("rank %d: float32 sum %v, want %v", r, f32, want)
	}
	for root := range n {
		b := []byte{byte(r), byte(10 * r)}
		if err := c.Bcast(b, root); err != nil {
			t.Fatal(err)
		}
		if want := []byte{byte(root), byte(10 * root)}; !slices.Equal(b, want) {
			t.Errorf("rank %d: broadcast from %d gave %v, want %v", r, root, b, want)
		}
	}
	if err := c.Bcast(nil, n); err == nil {
		t.Errorf("rank %d: broadcast from root %d of %d = nil, want an error", r, n, n)
	}
	if err := c.Barrier(); err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		os.Exit(1)
	}
	if err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
}
