package expressive

import (
	"fmt"
	"math"
	"time"
)

// Methods of realising a target.
const (
	MethodJL = "jl" // the constructive algorithm (JLSet)
	MethodGD = "gd" // gradient descent on the input of a random module (GDSet)
)

// Cell is one cell of the experiment: a method, a length L and a sparsity k, with the
// trial settings shared by every d tried.
type Cell struct {
	Method string
	L, K   int
	Trials int     // targets per d
	Eps    float64 // precision
	Delta  float64 // a d passes when the success rate is >= 1 - Delta
	Range  float64 // target values are log-uniform on [1, Range]
	// Margins says how jl chooses its margin (Delta = log(1/eps) + margin); Margin is the
	// margin of MarginFixed.
	Margins MarginMode
	Margin  float64
	// GD configures gd; its Eps is overridden by the cell's Eps.
	GD GDOptions
	// EarlyStop ends the trials at a d as soon as pass or fail is decided; the rate is then
	// over the targets evaluated.
	EarlyStop bool
	Seed      uint64
}

// CellResult is the outcome of a cell's search over d.
type CellResult struct {
	Cell    Cell
	Search  SearchResult
	Seconds float64 // wall time of the whole search
}

// needed is the number of successes out of Trials that reaches rate 1 - Delta.
func (c Cell) needed() int {
	return int(math.Ceil((1-c.Delta)*float64(c.Trials) - 1e-9))
}

func (c Cell) validate() error {
	switch {
	case c.Method != MethodJL && c.Method != MethodGD:
		return fmt.Errorf("expressive: method %q, want %q or %q", c.Method, MethodJL, MethodGD)
	case c.L < 1 || c.K < 1:
		return fmt.Errorf("expressive: L = %d, k = %d, want both >= 1", c.L, c.K)
	case c.Trials < 1:
		return fmt.Errorf("expressive: trials = %d, want >= 1", c.Trials)
	case !(c.Delta >= 0 && c.Delta < 1):
		return fmt.Errorf("expressive: delta = %v, want 0 <= delta < 1", c.Delta)
	case c.Margins < MarginFixed || c.Margins > MarginTarget:
		return fmt.Errorf("expressive: %v, want fixed, cell or target", c.Margins)
	}
	_, err := jlDelta(c.Eps, c.Margin)
	return err
}

// Run searches the smallest d at which the cell's method realises at least a fraction
// 1 - Delta of Trials random targets (the same targets at every d). progress, if not nil,
// is called after each d. jl shares one G per (seed, L) across its d (nested columns, see
// Gram) and chooses its margin at each d by c.Margins; gd draws one module per (seed, d).
func (c Cell) Run(opts SearchOptions, progress func(DResult)) (CellResult, error) {
	if err := c.validate(); err != nil {
		return CellResult{}, err
	}
	start := time.Now()
	targets := make([]*Target, c.Trials)
	for n := range targets {
		t, err := RandomTarget(c.L, c.K, c.Range, streamRNG(c.Seed, tagTarget, uint64(c.L), uint64(c.K), uint64(n)))
		if err != nil {
			return CellResult{}, err
		}
		targets[n] = t
	}
	prepare, err := c.preparer(targets)
	if err != nil {
		return CellResult{}, err
	}
	eval := func(d int) (DResult, error) {
		try, mr, err := prepare(d)
		if err != nil {
			return DResult{}, err
		}
		r, err := c.evalAt(d, targets, try)
		r.Margin, r.MarginLo, r.MarginHi, r.CommonSuccesses = mr.margin, mr.seg.Lo, mr.seg.Hi, mr.common
		if c.Method == MethodJL && c.Margins == MarginFixed {
			r.CommonSuccesses = r.Successes
		}
		if err == nil && progress != nil {
			progress(r)
		}
		return r, err
	}
	sr, err := SmallestD(eval, opts)
	if err != nil {
		return CellResult{}, err
	}
	return CellResult{Cell: c, Search: sr, Seconds: time.Since(start).Seconds()}, nil
}

// trial is the outcome of realising one target.
type trial struct {
	prec        Precision
	iterations  int     // Adam steps (gd)
	maxAbsLogit float64 // max |z_ij| of the logits reached
}

// trier realises target number n.
type trier func(n int, t *Target) (trial, error)

// preparer returns the function that builds the method's fixed module at width d, with
// jl's choice of margin for the targets (the report is zero for gd).
func (c Cell) preparer(targets []*Target) (func(d int) (trier, marginReport, error), error) {
	if c.Method == MethodJL {
		gram, err := NewGram(c.L, c.Seed)
		if err != nil {
			return nil, err
		}
		return func(d int) (trier, marginReport, error) {
			gg, err := gram.At(d)
			if err != nil {
				return nil, marginReport{}, err
			}
			return c.jlTrier(gg, targets)
		}, nil
	}
	opts := c.GD
	opts.Eps = c.Eps
	return func(d int) (trier, marginReport, error) {
		set, err := NewGDSet(d, c.Seed, opts)
		if err != nil {
			return nil, marginReport{}, err
		}
		return func(n int, t *Target) (trial, error) {
			rng := streamRNG(c.Seed, tagInit, uint64(c.L), uint64(c.K), uint64(d), uint64(n))
			res, err := set.Fit(t, rng)
			return trial{prec: res.Precision, iterations: res.Iterations, maxAbsLogit: res.MaxAbsLogit}, err
		}, marginReport{}, nil
	}, nil
}

// evalAt runs the trials at width d.
func (c Cell) evalAt(d int, targets []*Target, try trier) (DResult, error) {
	need := c.needed()
	r := DResult{D: d, MaxLogRatio: math.Inf(-1), MaxLogLeak: math.Inf(-1)}
	iters := 0
	for n, t := range targets {
		if c.EarlyStop && (r.Successes >= need || r.Trials-r.Successes > len(targets)-need) {
			break
		}
		tr, err := try(n, t)
		if err != nil {
			return DResult{}, fmt.Errorf("expressive: %s, L = %d, k = %d, d = %d, target %d: %w", c.Method, c.L, c.K, d, n, err)
		}
		r.Trials++
		iters += tr.iterations
		if tr.prec.Success(c.Eps) {
			r.Successes++
		}
		r.MaxLogRatio = math.Max(r.MaxLogRatio, tr.prec.LogRatio)
		r.MaxLogLeak = math.Max(r.MaxLogLeak, tr.prec.LogLeak)
		r.MaxAbsLogit = math.Max(r.MaxAbsLogit, tr.maxAbsLogit)
	}
	r.Rate = float64(r.Successes) / float64(r.Trials)
	r.Pass = r.Successes >= need
	if c.Method == MethodGD {
		r.MeanIterations = float64(iters) / float64(r.Trials)
	}
	return r, nil
}
