package expressive

import (
	"fmt"
	"math"
)

// SearchOptions bounds the search for the smallest passing head width d.
type SearchOptions struct {
	Start  int     // first d tried, >= 1
	Max    int     // largest d tried, >= Start
	RelTol float64 // bisection stops once hi - lo <= RelTol * lo (0: down to hi - lo = 1)
	// Walk replaces doubling and bisection by steps of 1 from Start: up while d fails, down
	// while it passes. It costs |d - Start| + 2 evaluations, fewer than bisection when Start
	// is a good guess (the smallest d of the previous, shorter L) and failing evaluations
	// are the expensive ones. RelTol is then unused.
	Walk bool
}

// DResult is the outcome of the trials at one head width d.
type DResult struct {
	D         int
	Successes int
	Trials    int     // targets evaluated (fewer than asked when decided early)
	Rate      float64 // Successes / Trials
	Pass      bool    // the success rate over all asked targets reaches 1 - delta
	// Worst precision over the evaluated targets, in log form (docs/math.md, "Expressive power of attention matrices").
	MaxLogRatio float64
	MaxLogLeak  float64
	// MaxAbsLogit is the largest |z_ij| of the logits over the evaluated targets.
	MaxAbsLogit float64
	// MeanIterations is the mean number of Adam steps per target (gd only).
	MeanIterations float64
	// Margin is jl's margin: the fixed one, or the one common margin that realises the most
	// targets (used by MarginCell; with MarginTarget each target uses its own). Every margin
	// in [MarginLo, MarginHi] realises CommonSuccesses targets (MarginHi may be +Inf).
	Margin, MarginLo, MarginHi float64
	CommonSuccesses            int
}

// SearchResult is the outcome of a search over d.
type SearchResult struct {
	Found     bool
	D         int // smallest passing d found (valid when Found)
	FailBelow int // largest failing d below D (0 if none): D lies in (FailBelow, D]; Max when not Found
	Tried     []DResult
}

// SmallestD finds the smallest d with eval(d).Pass by doubling from Start (capped at Max)
// until a d passes, then bisecting between the last failing and the first passing d (or,
// with opts.Walk, by steps of 1 from Start). It assumes that passing is monotone in d; the success rate of a finite number of trials is
// noisy, so D is the smallest passing d along this path, not a certified minimum.
func SmallestD(eval func(d int) (DResult, error), opts SearchOptions) (SearchResult, error) {
	if opts.Start < 1 || opts.Max < opts.Start {
		return SearchResult{}, fmt.Errorf("expressive: search range [%d, %d], want 1 <= start <= max", opts.Start, opts.Max)
	}
	if !(opts.RelTol >= 0) || math.IsInf(opts.RelTol, 1) {
		return SearchResult{}, fmt.Errorf("expressive: search tolerance %v, want finite and >= 0", opts.RelTol)
	}
	var res SearchResult
	try := func(d int) (bool, error) {
		r, err := eval(d)
		if err != nil {
			return false, err
		}
		res.Tried = append(res.Tried, r)
		return r.Pass, nil
	}
	if opts.Walk {
		err := walk(try, opts, &res)
		return res, err
	}
	lo, hi := 0, 0
	for d := opts.Start; ; d = min(2*d, opts.Max) {
		pass, err := try(d)
		if err != nil {
			return res, err
		}
		if pass {
			hi = d
			break
		}
		lo = d
		if d == opts.Max {
			res.FailBelow = lo
			return res, nil
		}
	}
	for hi-lo > 1 && float64(hi-lo) > opts.RelTol*float64(lo) {
		mid := lo + (hi-lo)/2
		pass, err := try(mid)
		if err != nil {
			return res, err
		}
		if pass {
			hi = mid
		} else {
			lo = mid
		}
	}
	res.Found, res.D, res.FailBelow = true, hi, lo
	return res, nil
}

// walk is SmallestD's step-by-1 search (SearchOptions.Walk) with the evaluation try, which
// records each evaluation in res; walk sets the outcome.
func walk(try func(d int) (bool, error), opts SearchOptions, res *SearchResult) error {
	pass, err := try(opts.Start)
	if err != nil {
		return err
	}
	if pass { // down until a d fails or d = 1 passes
		d := opts.Start
		for d > 1 {
			if pass, err = try(d - 1); err != nil {
				return err
			}
			if !pass {
				break
			}
			d--
		}
		res.Found, res.D, res.FailBelow = true, d, d-1
		return nil
	}
	for d := opts.Start + 1; d <= opts.Max; d++ { // up until a d passes
		if pass, err = try(d); err != nil {
			return err
		}
		if pass {
			res.Found, res.D, res.FailBelow = true, d, d-1
			return nil
		}
	}
	res.FailBelow = opts.Max
	return nil
}
