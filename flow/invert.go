package flow

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
)

// rateFloor is the step size, relative to max(1, ||y||), below which a ratio of
// successive steps is not counted in the contraction rate: float64 rounding in g moves
// a step by about 1e-14 ||y||, which would make ratios of tiny steps noise.
const rateFloor = 1e-8

// ErrNotConverged is wrapped by every NotConvergedError.
var ErrNotConverged = errors.New("fixed-point iteration did not converge")

// NotConvergedError is the error of an inversion whose step never fell to the tolerance
// within the iteration cap, or became non-finite.
type NotConvergedError struct {
	Block      string
	Iterations int
	Step       float64 // the last step size
	Tol        float64
}

// Error describes the failure.
func (e *NotConvergedError) Error() string {
	return fmt.Sprintf("flow: %s: %v: step %.3g after %d iterations, tolerance %.3g", e.Block, ErrNotConverged, e.Step, e.Iterations, e.Tol)
}

// Unwrap returns ErrNotConverged.
func (e *NotConvergedError) Unwrap() error { return ErrNotConverged }

// Options control a fixed-point inversion.
type Options struct {
	Tol     float64      // stop when ||x_{k+1} - x_k|| <= Tol, in the sub-block's norm
	MaxIter int          // evaluations of g at most
	Log     *slog.Logger // where a failure to converge is logged; nil for nowhere
}

// validate returns an error naming a bad option.
func (o Options) validate() error {
	if !(o.Tol > 0) || math.IsInf(o.Tol, 0) {
		return fmt.Errorf("flow: tolerance %g, want finite and > 0", o.Tol)
	}
	if o.MaxIter < 1 {
		return fmt.Errorf("flow: iteration cap %d, want >= 1", o.MaxIter)
	}
	return nil
}

// Result holds the diagnostics of one sub-block's inversion.
type Result struct {
	Block      string
	Norm       Norm
	Lipschitz  float64 // g's constant in Norm (see SubBlock.Lipschitz)
	Certified  bool    // whether Lipschitz is a certified bound
	Converged  bool
	Iterations int       // evaluations of g
	Step       float64   // the final step ||x_k - x_{k-1}||
	Rate       float64   // largest ratio of successive steps above the noise floor; NaN if none
	Error      float64   // reconstruction error ||x_hat - x||, NaN when x is not known
	Steps      []float64 // step size of each iteration
	Errors     []float64 // ||x_k - x|| of each iteration, when x is known
}

// Invert solves y = x + g(x) for x by x_0 = y, x_{k+1} = y - g(x_k), stopping at the first
// step of at most opt.Tol. x, when not nil, is the true input: the result then holds the
// reconstruction error of each iterate. It returns the last iterate and the diagnostics,
// and a *NotConvergedError (logged to opt.Log) when the cap is reached or the step is not
// finite.
func (s *SubBlock) Invert(y, x []float64, opt Options) ([]float64, Result, error) {
	if err := opt.validate(); err != nil {
		return nil, Result{}, err
	}
	if x != nil && len(x) != len(y) {
		return nil, Result{}, fmt.Errorf("flow: %s: true input of %d values for an output of %d", s.Name, len(x), len(y))
	}
	lip, cert := s.Lipschitz()
	res := Result{Block: s.Name, Norm: s.Norm, Lipschitz: lip, Certified: cert, Rate: math.NaN(), Error: math.NaN()}
	floor := rateFloor * math.Max(1, s.Norm.Of(y, s.Width))
	xk := append([]float64(nil), y...)
	for res.Iterations < opt.MaxIter {
		next, err := s.Branch(xk) // g(x_k)
		if err != nil {
			return nil, res, err
		}
		for i := range next {
			next[i] = y[i] - next[i] // x_{k+1}
		}
		step := s.Norm.Dist(next, xk, s.Width)
		xk = next
		if n := len(res.Steps); n > 0 && res.Steps[n-1] > floor && step > floor {
			if r := step / res.Steps[n-1]; math.IsNaN(res.Rate) || r > res.Rate {
				res.Rate = r
			}
		}
		res.Steps = append(res.Steps, step)
		res.Iterations, res.Step = res.Iterations+1, step
		if x != nil {
			res.Errors = append(res.Errors, s.Norm.Dist(xk, x, s.Width))
		}
		if step <= opt.Tol || math.IsNaN(step) || math.IsInf(step, 0) {
			break
		}
	}
	if x != nil {
		res.Error = res.Errors[len(res.Errors)-1]
	}
	if res.Converged = res.Step <= opt.Tol; !res.Converged {
		err := &NotConvergedError{Block: s.Name, Iterations: res.Iterations, Step: res.Step, Tol: opt.Tol}
		if opt.Log != nil {
			opt.Log.Warn("inversion did not converge", "block", s.Name, "iterations", res.Iterations, "step", res.Step, "tol", opt.Tol, "lipschitz", lip, "certified", cert)
		}
		return xk, res, err
	}
	return xk, res, nil
}
