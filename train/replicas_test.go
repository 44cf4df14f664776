package train

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"lipformer/dist"
	"lipformer/model"
	"lipformer/spec"
)

// group is a job of n ranks in one process, for the tests: goroutines whose collective
// calls meet at a barrier, where the sums are taken in float64 and rank 0's broadcast is
// handed out.
type group struct {
	mu      sync.Mutex
	cond    *sync.Cond
	n       int
	arrived int       // ranks waiting at the current collective
	gen     int       // collectives completed
	acc     []float64 // the sum of the current collective
	root    []byte    // the broadcast of the current collective
}

// newGroup returns the communicators of the ranks of a job of n.
func newGroup(n int) []dist.Comm {
	g := &group{n: n}
	g.cond = sync.NewCond(&g.mu)
	comms := make([]dist.Comm, n)
	for r := range comms {
		comms[r] = &member{g: g, rank: r}
	}
	return comms
}

// meet calls add, waits for every rank to have called its own and then calls take, under
// the group's lock. The first rank to arrive at a collective resets its state (start).
func (g *group) meet(add, take func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	gen := g.gen
	add()
	if g.arrived++; g.arrived == g.n {
		g.arrived, g.gen = 0, g.gen+1
		g.cond.Broadcast()
	}
	for g.gen == gen {
		g.cond.Wait()
	}
	take()
}

// member is one rank of a group.
type member struct {
	g    *group
	rank int
}

func (m *member) Rank() int { return m.rank }
func (m *member) Size() int { return m.g.n }

// start resets the state of a collective for the first rank to arrive.
func (m *member) start(n int) {
	if m.g.arrived == 0 {
		m.g.acc, m.g.root = make([]float64, n), nil
	}
}

func (m *member) SumFloat64(buf []float64) error {
	m.g.meet(func() {
		m.start(len(buf))
		for i, x := range buf {
			m.g.acc[i] += x
		}
	}, func() { copy(buf, m.g.acc) })
	m.done()
	return nil
}

func (m *member) SumFloat32(buf []float32) error {
	m.g.meet(func() {
		m.start(len(buf))
		for i, x := range buf {
			m.g.acc[i] += float64(x)
		}
	}, func() {
		for i := range buf {
			buf[i] = float32(m.g.acc[i])
		}
	})
	m.done()
	return nil
}

func (m *member) Bcast(buf []byte, root int) error {
	m.g.meet(func() {
		m.start(0)
		if m.rank == root {
			m.g.root = append([]byte(nil), buf...)
		}
	}, func() { copy(buf, m.g.root) })
	m.done()
	return nil
}

func (m *member) Barrier() error {
	m.g.meet(func() { m.start(0) }, func() {})
	m.done()
	return nil
}

func (m *member) Abort(int)       {}
func (m *member) Finalize() error { return nil }

// done waits until every rank has taken the result of the collective, so that the next
// one does not reset it under a rank still copying.
func (m *member) done() {
	m.g.meet(func() {}, func() {})
}

// trainReplicas trains n replicas of a float64 model with opt on the corpus of
// smallCorpus in out, the contexts of the ranks from ctxs (context.Background when nil),
// and returns each rank's summary and error.
func trainReplicas(t *testing.T, n int, opt Options, out string, ctxs []context.Context) ([]*Summary, []error) {
	t.Helper()
	c := smallCorpus(t)
	comms := newGroup(n)
	sums, errs := make([]*Summary, n), make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		run := &Run{Model: smallModel(t, c, spec.L2, spec.Float64, 1), Corpus: c, Opt: opt, Out: out, Log: quiet(), Comm: comms[r]}
		ctx := context.Background()
		if ctxs != nil {
			ctx = ctxs[r]
		}
		wg.Go(func() { sums[r], errs[r] = run.Train(ctx) })
	}
	wg.Wait()
	return sums, errs
}

// TestReplicasTrainAsOneProcess: two in-process replicas of two sequences each log the
// losses, gradient norms and validations and save the weights of one process with the
// batch of four.
func TestReplicasTrainAsOneProcess(t *testing.T) {
	opt := smallOptions(12)
	opt.EvalEvery = 4
	one, two := t.TempDir(), t.TempDir()
	if _, errs := trainReplicas(t, 1, opt, one, nil); errs[0] != nil {
		t.Fatal(errs[0])
	}
	sums, errs := trainReplicas(t, 2, opt, two, nil)
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	if sums[0].FinalValBPC != sums[1].FinalValBPC || sums[0].TestBPC != sums[1].TestBPC {
		t.Errorf("the ranks' final scores differ: val %v and %v, test %v and %v", sums[0].FinalValBPC, sums[1].FinalValBPC, sums[0].TestBPC, sums[1].TestBPC)
	}
	mw, mg := readRunMetrics(t, one), readRunMetrics(t, two)
	if len(mg.Train) != len(mw.Train) || len(mg.Eval) != len(mw.Eval) {
		t.Fatalf("%d training and %d validation rows, want %d and %d", len(mg.Train), len(mg.Eval), len(mw.Train), len(mw.Eval))
	}
	const tol = 1e-9
	for i, w := range mw.Train {
		if g := mg.Train[i]; g.Step != w.Step || math.Abs(g.Loss-w.Loss) > tol || math.Abs(g.GradNorm-w.GradNorm) > tol {
			t.Errorf("step %d: loss %v norm %v, want step %d loss %v norm %v", g.Step, g.Loss, g.GradNorm, w.Step, w.Loss, w.GradNorm)
		}
	}
	for i, w := range mw.Eval {
		if g := mg.Eval[i]; g.Step != w.Step || math.Abs(g.ValLoss-w.ValLoss) > tol {
			t.Errorf("validation at step %d: %v, want at step %d: %v", g.Step, g.ValLoss, w.Step, w.ValLoss)
		}
	}
	wm, _, err := model.Load(filepath.Join(one, LatestFile))
	if err != nil {
		t.Fatal(err)
	}
	gm, _, err := model.Load(filepath.Join(two, LatestFile))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range wm.Params() {
		w, g := p.Value.Data().([]float64), gm.Params()[i].Value.Data().([]float64)
		for j := range w {
			if math.Abs(g[j]-w[j]) > tol {
				t.Fatalf("%s element %d is %v, want %v", p.Name, j, g[j], w[j])
			}
		}
	}
}

// TestReplicasStopTogether: an interrupt of one replica stops both before the same step,
// with an interrupted summary.
func TestReplicasStopTogether(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	sums, errs := trainReplicas(t, 2, smallOptions(12), t.TempDir(), []context.Context{context.Background(), cancelled})
	for r := range 2 {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		if !sums[r].Interrupted || sums[r].Steps != 0 {
			t.Errorf("rank %d: interrupted %t after %d steps, want interrupted before the first", r, sums[r].Interrupted, sums[r].Steps)
		}
	}
}

// TestReplicasNeedAnEqualShare: a batch that the replicas cannot share equally is refused
// by every rank.
func TestReplicasNeedAnEqualShare(t *testing.T) {
	opt := smallOptions(12)
	opt.Batch = 3
	_, errs := trainReplicas(t, 2, opt, t.TempDir(), nil)
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "not a multiple of the 2 replicas") {
			t.Errorf("rank %d: batch 3 on 2 replicas: %v, want an error", r, err)
		}
	}
}

// TestReplicasThatDifferAreStopped: replicas whose initial weights differ are stopped
// before they train, with ErrReplicasDiffer on every rank.
func TestReplicasThatDifferAreStopped(t *testing.T) {
	c := smallCorpus(t)
	comms := newGroup(2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		run := &Run{Model: smallModel(t, c, spec.L2, spec.Float64, uint64(1+r)), Corpus: c, Opt: smallOptions(12), Out: t.TempDir(), Log: quiet(), Comm: comms[r]}
		wg.Go(func() { _, errs[r] = run.Train(context.Background()) })
	}
	wg.Wait()
	for r, err := range errs {
		if !errors.Is(err, ErrReplicasDiffer) {
			t.Errorf("rank %d: %v, want ErrReplicasDiffer", r, err)
		}
	}
}

// readRunMetrics reads the metrics log of the run directory dir.
func readRunMetrics(t *testing.T, dir string) Metrics {
	t.Helper()
	m, err := ReadMetrics(filepath.Join(dir, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
