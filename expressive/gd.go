package expressive

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// GDOptions configures the gd method.
type GDOptions struct {
	Eps          float64 // precision of SPEC section 5, 0 < Eps < 1
	MaxIter      int     // Adam steps before giving up on a target, >= 1
	LearningRate float64 // Adam step size, > 0
}

// DefaultGDOptions returns the options used by the experiment at precision eps.
func DefaultGDOptions(eps float64) GDOptions {
	return GDOptions{Eps: eps, MaxIter: 2000, LearningRate: 0.2}
}

func (o GDOptions) validate() error {
	if !(o.Eps > 0 && o.Eps < 1) {
		return fmt.Errorf("expressive: precision eps = %v, want 0 < eps < 1", o.Eps)
	}
	if o.MaxIter < 1 {
		return fmt.Errorf("expressive: gd max iterations = %d, want >= 1", o.MaxIter)
	}
	if !(o.LearningRate > 0) || math.IsInf(o.LearningRate, 1) {
		return fmt.Errorf("expressive: gd learning rate = %v, want finite and > 0", o.LearningRate)
	}
	return nil
}

// GDSet is the gd method for one trial set: a fixed random module of head width d shared
// by every target, whose input X is found per target by Adam on Loss.
//
// The input width is 2d, as for the constructive method, and W_Q, W_K are 2d x d with
// independent N(0, 1/(2d)) entries. Then [W_Q, W_K] is square and almost surely
// invertible, so Q = X W_Q and K = X W_K range over all pairs of L x d matrices: the module
// can produce exactly the logit matrices of rank <= d, the same family as the constructive
// method, which makes the smallest d of the two methods comparable.
type GDSet struct {
	Module *Module
	Opts   GDOptions
}

// NewGDSet draws the module of head width d from seed (it does not depend on L).
func NewGDSet(d int, seed uint64, opts GDOptions) (*GDSet, error) {
	if d < 1 {
		return nil, fmt.Errorf("expressive: head width d = %d, want >= 1", d)
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	rng := streamRNG(seed, tagWeights, uint64(d))
	scale := 1 / math.Sqrt(float64(2*d))
	draw := func() *mat.Dense {
		w := mat.NewDense(2*d, d, nil)
		for i := range 2 * d {
			for a := range d {
				w.Set(i, a, scale*rng.NormFloat64())
			}
		}
		return w
	}
	wq := draw()
	wk := draw()
	mod, err := NewModule(wq, wk)
	if err != nil {
		return nil, err
	}
	return &GDSet{Module: mod, Opts: opts}, nil
}

// GDResult is the outcome of fitting one target.
type GDResult struct {
	X           *mat.Dense // final input, (L, 2d)
	Precision   Precision  // of the module's attention matrix on X
	Success     bool       // Precision.Success(Eps)
	Iterations  int        // Adam steps taken (0 if the initial X already succeeds)
	InitialLoss float64
	FinalLoss   float64
	MaxAbsLogit float64 // max |z_ij| of the final logits: the scale the input needed
}

// Fit searches an input X realising t: X starts with independent N(0, d^{-1/2}) entries
// drawn from rng (so the logits start with unit variance) and takes Adam steps on Loss
// until the precision succeeds or MaxIter steps are done.
func (s *GDSet) Fit(t *Target, rng *rand.Rand) (GDResult, error) {
	if err := t.Validate(); err != nil {
		return GDResult{}, err
	}
	if rng == nil {
		return GDResult{}, fmt.Errorf("expressive: gd Fit needs a random generator")
	}
	n := s.Module.InputWidth()
	x := mat.NewDense(t.L, n, nil)
	sd := math.Pow(float64(s.Module.HeadWidth()), -0.25)
	raw := x.RawMatrix().Data
	for i := range raw {
		raw[i] = sd * rng.NormFloat64()
	}
	opt := newAdam(len(raw), s.Opts.LearningRate)
	var res GDResult
	for it := 0; ; it++ {
		loss, grad, z, err := s.LossGrad(x, t)
		if err != nil {
			return GDResult{}, err
		}
		prec, err := MeasureLogits(z, t)
		if err != nil {
			return GDResult{}, fmt.Errorf("expressive: gd diverged at iteration %d: %w", it, err)
		}
		if it == 0 {
			res.InitialLoss = loss
		}
		res.FinalLoss, res.Precision, res.Iterations = loss, prec, it
		res.Success = prec.Success(s.Opts.Eps)
		if res.Success || it == s.Opts.MaxIter {
			res.X, res.MaxAbsLogit = x, maxAbs(z)
			return res, nil
		}
		opt.step(raw, grad.RawMatrix().Data)
	}
}

// LossGrad returns Loss at the module's logits on x, its gradient with respect to x
// (back-propagated by hand through Z = Q K^T, Q = X W_Q, K = X W_K), and the logits.
// x, grad: (L, 2d); z: (L, L)
func (s *GDSet) LossGrad(x *mat.Dense, t *Target) (loss float64, grad, z *mat.Dense, err error) {
	q, k, err := s.Module.project(x)
	if err != nil {
		return 0, nil, nil, err
	}
	L, n := x.Dims()
	if L != t.L {
		return 0, nil, nil, fmt.Errorf("expressive: input X has %d rows, want the target's L = %d", L, t.L)
	}
	d := s.Module.HeadWidth()
	z = mat.NewDense(L, L, nil)
	z.Mul(q, k.T())
	loss, gz := Loss(z, t, s.Opts.Eps)
	dq, dk := mat.NewDense(L, d, nil), mat.NewDense(L, d, nil) // (L, d)
	dq.Mul(gz, k)
	dk.Mul(gz.T(), q)
	grad = mat.NewDense(L, n, nil)
	grad.Mul(dq, s.Module.WQ.T())
	var tmp mat.Dense
	tmp.Mul(dk, s.Module.WK.T())
	grad.Add(grad, &tmp)
	return loss, grad, z, nil
}
