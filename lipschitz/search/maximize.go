package search

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
)

// DefaultLRFinal is the default last step size of Maximize, as a fraction of
// the first.
const DefaultLRFinal = 0.1

// Recommended settings of the starts (docs/lipschitz_search.md): with them 5
// starts of 300 steps come within 1% of the best of 50 on D = H = 1 tied L2
// attention at N = 2 to 128, where the draws of InitMin and InitMax without
// restarts fall up to 18% short, and 5 starts of 200 steps within 2% of 50
// such draws at N = 200 to 1000.
const (
	DefaultEscape   = 0.1 // Options.Escape
	DefaultRestarts = 2   // Options.Restarts
	DefaultPerturb  = 1.4 // Options.Perturb
)

// Options configures Maximize.
type Options struct {
	Norm    Norm    // the norm of J to maximise
	Starts  int     // starts (>= 1): Init, then random draws
	Steps   int     // Adam steps per start (>= 0)
	LR      float64 // Adam step size in the units of x (> 0), decayed (see Maximize)
	LRFinal float64 // the last step size as a fraction of LR, in (0, 1]; 0 is DefaultLRFinal
	Radius  float64 // > 0: stay in the box ||X||_inf <= Radius; 0: unbounded
	// Escape > 0: unbounded random starts are an N(0, 1) draw scaled to where
	// ||J|| first exceeds (1 + Escape) ||J(0)||; 0: every entry from
	// N(0, sigma^2), sigma log-uniform in [InitMin, InitMax] per start
	// (0 < InitMin <= InitMax).
	Escape   float64
	InitMin  float64
	InitMax  float64
	Restarts int     // climbs of each start after the first, from its best input perturbed (>= 0)
	Perturb  float64 // the restarts' noise, times the standard deviation of the best input's entries over sqrt(N) (> 0 with Restarts)
	Width    int     // the token width D of the input, which gives N for the restarts' noise (0: 1)
	HVPStep  float64 // step of the Hessian-vector products; 0 is DefaultHVPStep
	Refresh  int     // the full Jacobian every Refresh steps (0 or 1: every step), Objective.Partial between
	Seed     uint64  // start s draws its input from PCG(Seed, s)
	// Init, if not empty, gives the inputs of the first len(Init) starts
	// (projected onto the box) instead of random draws.
	Init [][]float64
}

// Result is the outcome of Maximize.
type Result struct {
	Best     float64   // the largest ||J(X)||_p met: a lower bound on Lip_p
	X        []float64 // an input where it was met
	Start    int       // the start that met it
	PerStart []float64 // the best value of each start
}

// check validates o for inputs of length k, naming the field at fault.
func (o Options) check(k int) error {
	switch {
	case o.Norm != NormInf && o.Norm != Norm2:
		return fmt.Errorf("search: Norm = %v, want inf or 2", o.Norm)
	case o.Starts < 1:
		return fmt.Errorf("search: Starts = %d, want >= 1", o.Starts)
	case o.Steps < 0:
		return fmt.Errorf("search: Steps = %d, want >= 0", o.Steps)
	case !(o.LR > 0) || math.IsInf(o.LR, 1):
		return fmt.Errorf("search: LR = %v, want finite and > 0", o.LR)
	case !(o.LRFinal >= 0 && o.LRFinal <= 1):
		return fmt.Errorf("search: LRFinal = %v, want in (0, 1] (0: default)", o.LRFinal)
	case !(o.Radius >= 0) || math.IsInf(o.Radius, 1):
		return fmt.Errorf("search: Radius = %v, want finite and >= 0", o.Radius)
	case !(o.Escape >= 0) || math.IsInf(o.Escape, 1):
		return fmt.Errorf("search: Escape = %v, want finite and >= 0", o.Escape)
	case o.Radius == 0 && o.Escape == 0 && o.Starts > len(o.Init) && (!(o.InitMin > 0) || !(o.InitMax >= o.InitMin) || math.IsInf(o.InitMax, 1)):
		return fmt.Errorf("search: InitMin = %v, InitMax = %v, want 0 < InitMin <= InitMax, finite", o.InitMin, o.InitMax)
	case math.IsNaN(o.HVPStep) || math.IsInf(o.HVPStep, 0) || o.HVPStep < 0:
		return fmt.Errorf("search: HVPStep = %v, want finite and >= 0", o.HVPStep)
	case o.Restarts < 0:
		return fmt.Errorf("search: Restarts = %d, want >= 0", o.Restarts)
	case o.Restarts > 0 && (!(o.Perturb > 0) || math.IsInf(o.Perturb, 1)):
		return fmt.Errorf("search: Perturb = %v, want finite and > 0 with Restarts", o.Perturb)
	case o.Width < 0 || o.Width > 0 && k%o.Width != 0:
		return fmt.Errorf("search: Width = %d for inputs of length %d, want a divisor (0: 1)", o.Width, k)
	case o.Refresh < 0:
		return fmt.Errorf("search: Refresh = %d, want >= 0", o.Refresh)
	case len(o.Init) > o.Starts:
		return fmt.Errorf("search: %d Init inputs for %d starts", len(o.Init), o.Starts)
	}
	for s, x := range o.Init {
		if err := checkVec(fmt.Sprintf("Init[%d]", s), x, k); err != nil {
			return err
		}
	}
	return nil
}

// Maximize searches for the input X that maximises ||J(X)||_p. Each of
// o.Starts starts climbs from its start point, then o.Restarts times from its
// best input so far plus noise (perturbed); the first climb has o.Steps minus
// o.Restarts * floor(o.Steps / (2 o.Restarts)) steps, each restart the floor,
// so that restarts take at most half the steps. A climb is Adam ascent on
// Objective with the step size decayed from o.LR to o.LR * o.LRFinal along a
// half cosine, inside a box projecting every step back onto it.
//
// Every o.Refresh steps (every step if o.Refresh <= 1) the step follows the
// gradient of the full Objective.ValueGrad; in between, of Objective.Partial,
// which keeps the same row (inf-norm) or left singular vector (2-norm) at a
// fraction of the cost. The value at every input visited (including the last)
// is a lower bound; each start reports ||J||_p evaluated in full at its best
// input, which Result.X holds for the best start.
//
// Starts are o.Init, then random: uniform in the box, or without one at the
// edge of the plateau around 0 (o.Escape > 0, see escape in start.go) or from
// N(0, sigma^2) with sigma log-uniform in [InitMin, InitMax]. Inputs on the
// plateau stay there (a row of an L2 Jacobian with every entry positive sums
// to exactly 1, the derivative along a translation), large ones lead to poorer
// local maxima, and the best scale shrinks as N grows.
//
// The starts are spread over the maps, one goroutine per map; the maps must
// be independent instances of the same layer. The result does not depend on
// their number: start s is seeded by (o.Seed, s) alone, and ties go to the
// lowest start. done, if not nil, is called (from any goroutine, one call at
// a time) after each start.
func Maximize(maps []Map, o Options, done func()) (Result, error) {
	if len(maps) == 0 {
		return Result{}, errors.New("search: Maximize needs at least one map")
	}
	if err := o.check(maps[0].Len()); err != nil {
		return Result{}, err
	}
	type outcome struct {
		best float64
		x    []float64
		err  error
	}
	outs := make([]outcome, o.Starts)
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, m := range maps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range next {
				best, x, err := ascend(m, o, s)
				outs[s] = outcome{best, x, err}
				if done != nil {
					mu.Lock()
					done()
					mu.Unlock()
				}
			}
		}()
	}
	for s := range o.Starts {
		next <- s
	}
	close(next)
	wg.Wait()
	r := Result{Best: math.Inf(-1), PerStart: make([]float64, o.Starts)}
	for s, out := range outs {
		if out.err != nil {
			return Result{}, fmt.Errorf("search: start %d: %w", s, out.err)
		}
		r.PerStart[s] = out.best
		if out.best > r.Best {
			r.Best, r.X, r.Start = out.best, out.x, s
		}
	}
	return r, nil
}

// ascend runs start s and returns its best value and input.
func ascend(m Map, o Options, s int) (float64, []float64, error) {
	obj, err := NewObjective(m, o.Norm, o.HVPStep)
	if err != nil {
		return 0, nil, err
	}
	rng := rand.New(rand.NewPCG(o.Seed, uint64(s)))
	x, err := startPoint(obj, o, s, rng)
	if err != nil {
		return 0, nil, err
	}
	best, bestX := math.Inf(-1), x
	for c, steps := range o.climbs() {
		if c > 0 {
			x = perturbed(bestX, max(o.Width, 1), o.Perturb, o.Radius, rng)
		}
		v, at, err := climb(obj, o, x, steps)
		if err != nil {
			return 0, nil, err
		}
		if v > best {
			best, bestX = v, at
		}
	}
	return best, bestX, nil
}

// climbs returns the steps of each climb of a start: the first, then the
// restarts'.
func (o Options) climbs() []int {
	steps := []int{o.Steps}
	if o.Restarts == 0 {
		return steps
	}
	each := o.Steps / (2 * o.Restarts)
	steps[0] -= o.Restarts * each
	for range o.Restarts {
		steps = append(steps, each)
	}
	return steps
}

// climb takes steps Adam steps from x (overwritten) and returns ||J||_p in
// full at the best input visited, and that input.
func climb(obj *Objective, o Options, x []float64, steps int) (float64, []float64, error) {
	grad := make([]float64, len(x))
	opt := newAdam(len(x), o.Radius)
	best, bestX := math.Inf(-1), make([]float64, len(x))
	final := o.LRFinal
	if final == 0 {
		final = DefaultLRFinal
	}
	keep := func(v float64) {
		if v > best {
			best = v
			copy(bestX, x)
		}
	}
	for t := range steps {
		value := obj.ValueGrad
		if o.Refresh > 1 && t%o.Refresh != 0 {
			value = obj.Partial
		}
		v, err := value(x, grad)
		if err != nil {
			return 0, nil, err
		}
		keep(v)
		lr := o.LR * (final + (1-final)*(1+math.Cos(math.Pi*float64(t)/float64(steps)))/2)
		opt.step(x, grad, lr)
	}
	v, err := obj.Value(x)
	if err != nil {
		return 0, nil, err
	}
	keep(v)
	// A value from Partial is a lower bound on the full norm at its input.
	full, err := obj.Value(bestX)
	return full, bestX, err
}
