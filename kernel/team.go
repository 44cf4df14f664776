package kernel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Parallel calls f(i) for every i in [0, w), f(0) on the calling goroutine and the others
// on the process's worker goroutines, and returns when all have returned. A worker that
// is busy (another Parallel, or one nested in f) is replaced by a new goroutine, so calls
// may overlap and nest. Which goroutine runs an f(i) never changes what it computes.
//
// A worker that has run its part polls for the next for spinFor before it blocks, and a
// caller polls for its workers' ends as long before it blocks, both yielding the processor
// every yieldEvery: a training step of a small model runs hundreds of parallel sections a
// few tens of microseconds apart, and a goroutine started for each, or woken from a
// blocked thread, reached the other core too late to share the work (docs/performance.md,
// "Hand-offs between the cores").
func Parallel(w int, f func(i int)) {
	if w <= 1 {
		if w == 1 {
			f(0)
		}
		return
	}
	var claimed [maxClaim]*worker
	n := team.claim(claimed[:min(w-1, maxClaim)])
	for k, wk := range claimed[:n] {
		wk.start(f, k+1)
	}
	var wg sync.WaitGroup
	for i := n + 1; i < w; i++ {
		wg.Go(func() { f(i) })
	}
	f(0)
	for _, wk := range claimed[:n] {
		wk.wait()
	}
	wg.Wait()
}

// spinFor is how long a worker that has run its part polls for the next one, and a caller
// for its workers' ends, before blocking: longer than all but the rarest serial stretches
// between two parallel sections of a training step (at P2, 99% of them are under a
// millisecond), since a worker that has blocked comes back late; short enough to give the
// core back soon when the work stops (docs/performance.md, "Hand-offs between the cores").
const spinFor = time.Millisecond

// pollsPerCheck is the polls between two readings of the clock.
const pollsPerCheck = 64

// yieldEvery is how often a poller gives its processor to runnable goroutines
// (runtime.Gosched): rarely enough that yielding, which takes the scheduler's lock, is a
// small part of polling, often enough that a goroutine queued behind a poller waits
// little.
const yieldEvery = 10 * time.Microsecond

// poller paces a polling loop.
type poller struct {
	n              int
	start, yielded time.Time
}

// newPoller starts the pacing of a polling loop.
func newPoller() poller {
	now := time.Now()
	return poller{start: now, yielded: now}
}

// expired counts a poll and reports whether spinFor has passed since the loop began,
// yielding the processor every yieldEvery.
func (p *poller) expired() bool {
	p.n++
	if p.n%pollsPerCheck != 0 {
		return false
	}
	now := time.Now()
	if now.Sub(p.start) > spinFor {
		return true
	}
	if now.Sub(p.yielded) > yieldEvery {
		runtime.Gosched()
		p.yielded = now
	}
	return false
}

// maxClaim bounds the workers one Parallel takes; parts beyond it get goroutines.
const maxClaim = 63

// team is the process's worker goroutines: made as Parallel first needs them, up to
// GOMAXPROCS - 1 at the largest GOMAXPROCS seen, and never stopped (a parked worker costs
// only its stack). Like internal/sgemm's packing buffers, it is a pool of the process's
// resources, not state that any result depends on.
var team crew

// crew is a set of worker goroutines that callers claim one at a time.
type crew struct {
	mu      sync.Mutex
	workers atomic.Pointer[[]*worker] // grown under mu, read without it
}

// claim takes idle or parked workers into out, as many as it finds up to len(out), and
// returns how many; it starts workers up to GOMAXPROCS - 1 first.
func (c *crew) claim(out []*worker) int {
	ws := c.grow(runtime.GOMAXPROCS(0) - 1)
	n := 0
	for _, wk := range ws {
		if n == len(out) {
			break
		}
		if wk.state.CompareAndSwap(workerIdle, workerClaimed) || wk.state.CompareAndSwap(workerParked, workerWaking) {
			out[n] = wk
			n++
		}
	}
	return n
}

// grow returns the workers, started up to at least n.
func (c *crew) grow(n int) []*worker {
	if p := c.workers.Load(); p != nil && len(*p) >= n {
		return *p
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var ws []*worker
	if p := c.workers.Load(); p != nil {
		ws = *p
	}
	if len(ws) >= n {
		return ws
	}
	grown := append(make([]*worker, 0, n), ws...)
	for len(grown) < n {
		wk := &worker{wake: make(chan struct{}, 1), done: make(chan struct{}, 1)}
		wk.state.Store(workerParked)
		go wk.loop()
		grown = append(grown, wk)
	}
	c.workers.Store(&grown)
	return grown
}

// A worker's states. A claimed worker belongs to its caller until the caller has seen it
// finished and set it idle again.
const (
	workerIdle     int32 = iota // polling for a part, free to claim
	workerParked                // blocked on wake, free to claim
	workerClaimed               // claimed while idle: its part is being set
	workerWaking                // claimed while parked: its part is being set, then wake
	workerReady                 // its part is set, to run
	workerFinished              // its part has returned
)

// worker is one worker goroutine and the part it runs.
type worker struct {
	state atomic.Int32
	f     func(int) // the part: f(i), set by the caller that claimed the worker
	i     int
	wake  chan struct{} // (1) a parked worker's wake-up
	done  chan struct{} // (1) a finished part, for a caller that stopped polling
}

// start hands the claimed worker the part f(i).
func (wk *worker) start(f func(int), i int) {
	wk.f, wk.i = f, i
	parked := wk.state.Load() == workerWaking
	wk.state.Store(workerReady)
	if parked {
		wk.wake <- struct{}{}
	}
}

// wait returns when the worker's part has returned, and frees the worker.
func (wk *worker) wait() {
	p := newPoller()
	for wk.state.Load() != workerFinished {
		if p.expired() {
			for wk.state.Load() != workerFinished {
				<-wk.done // a token left by an earlier part only makes the loop look again
			}
			break
		}
	}
	wk.state.Store(workerIdle)
}

// loop runs the worker's parts for ever.
func (wk *worker) loop() {
	for {
		wk.await()
		wk.f(wk.i)
		wk.f = nil
		wk.state.Store(workerFinished)
		select {
		case wk.done <- struct{}{}:
		default: // a token is already there: the caller will look at the state again
		}
	}
}

// await returns when the worker has a part to run: polling while it is idle (or not yet
// given back by its last caller) for spinFor, then blocked until a caller wakes it.
func (wk *worker) await() {
	p := newPoller()
	for {
		s := wk.state.Load()
		if s == workerReady {
			return
		}
		if s == workerParked {
			<-wk.wake
			continue
		}
		if p.expired() && s == workerIdle && wk.state.CompareAndSwap(workerIdle, workerParked) {
			<-wk.wake
		}
	}
}
