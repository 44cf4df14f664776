package expressive

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"lipformer/train"
)

// GDOptions configures the gd method.
type GDOptions struct {
	Eps          float64 // precision (docs/math.md, Expressive power of attention matrices), 0 < Eps < 1
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
// by every target, whose input X is found per target by Adam on the loss of loss.go,
// differentiated by Gorgonia.
//
// The input width is 2d, as for the constructive method, and W_Q, W_K are 2d x d with
// independent N(0, 1/(2d)) entries. Then [W_Q, W_K] is square and almost surely
// invertible, so Q = X W_Q and K = X W_K range over all pairs of L x d matrices: the module
// can produce exactly the logit matrices of rank <= d, the same family as the constructive
// method, which makes the smallest d of the two methods comparable.
//
// A GDSet compiles one loss graph per target shape (L, largest row support) on first use
// and reuses it for every step and every later target of that shape. It is not safe for
// concurrent use.
type GDSet struct {
	Module   *Module
	Opts     GDOptions
	machines map[[2]int]*gdMachine // by (L, K)
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

// machine returns the compiled loss for targets shaped like t, building it on first use.
func (s *GDSet) machine(t *Target) (*gdMachine, error) {
	key := [2]int{t.L, maxRowSize(t)}
	if gm, ok := s.machines[key]; ok {
		return gm, nil
	}
	if s.machines == nil {
		s.machines = map[[2]int]*gdMachine{}
	}
	gm, err := newGDMachine(s.Module, key[0], key[1], s.Opts.Eps)
	if err != nil {
		return nil, err
	}
	s.machines[key] = gm
	return gm, nil
}

// Fit searches an input X realising t: X starts with independent N(0, d^{-1/2}) entries
// drawn from rng (so the logits start with unit variance) and takes Adam steps on the
// loss until the precision succeeds or MaxIter steps are done.
func (s *GDSet) Fit(t *Target, rng *rand.Rand) (GDResult, error) {
	if err := t.Validate(); err != nil {
		return GDResult{}, err
	}
	if rng == nil {
		return GDResult{}, fmt.Errorf("expressive: gd Fit needs a random generator")
	}
	gm, err := s.machine(t)
	if err != nil {
		return GDResult{}, err
	}
	if err := gm.lg.SetTarget(t); err != nil {
		return GDResult{}, err
	}
	x := gm.X() // (L, 2d), row-major
	sd := math.Pow(float64(s.Module.HeadWidth()), -0.25)
	for i := range x {
		x[i] = sd * rng.NormFloat64()
	}
	grad := make([]float64, len(x)) // (L, 2d)
	opt, err := train.NewAdam([]train.Param[float64]{{Name: "X", Value: x, Grad: grad}}, train.DefaultAdamConfig())
	if err != nil {
		return GDResult{}, err
	}
	var res GDResult
	for it := 0; ; it++ {
		loss, z, err := gm.Run(grad)
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
			res.X = mat.NewDense(t.L, s.Module.InputWidth(), append([]float64(nil), x...))
			res.MaxAbsLogit = maxAbs(z)
			return res, nil
		}
		if err := opt.Step(s.Opts.LearningRate); err != nil {
			return GDResult{}, err
		}
	}
}
