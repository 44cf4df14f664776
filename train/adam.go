package train

import (
	"errors"
	"fmt"
	"math"
)

// Float is the set of element types the optimizer and clipping work on.
type Float interface {
	float32 | float64
}

// Param is one named parameter: its values and the gradient of the loss with
// respect to them, of equal length. The optimizer updates Value in place and
// only reads Grad. Decay marks the parameter for decoupled weight decay
// (typically weight matrices; not gains, biases or, by choice, embeddings).
type Param[T Float] struct {
	Name  string
	Value []T
	Grad  []T
	Decay bool
	// LRScale multiplies the learning rate of this parameter (not its weight decay); 0
	// (unset) means 1.
	LRScale float64
}

// AdamConfig holds the optimizer's hyperparameters other than the learning
// rate, which the caller passes to every Step.
type AdamConfig struct {
	Beta1       float64 // decay of the first-moment average, in [0, 1)
	Beta2       float64 // decay of the second-moment average, in [0, 1)
	Eps         float64 // added to the root of the second moment, > 0
	WeightDecay float64 // decoupled (AdamW) decay rate of Decay parameters, >= 0
}

// DefaultAdamConfig returns Beta1 0.9, Beta2 0.999, Eps 1e-8 and no weight
// decay (PyTorch's Adam defaults). nanoGPT runs use Beta2 0.99.
func DefaultAdamConfig() AdamConfig {
	return AdamConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
}

// Validate reports the first hyperparameter out of its range.
func (c AdamConfig) Validate() error {
	switch {
	case !(c.Beta1 >= 0 && c.Beta1 < 1):
		return fmt.Errorf("adam: Beta1 %v is not in [0, 1)", c.Beta1)
	case !(c.Beta2 >= 0 && c.Beta2 < 1):
		return fmt.Errorf("adam: Beta2 %v is not in [0, 1)", c.Beta2)
	case !(c.Eps > 0) || math.IsInf(c.Eps, 1):
		return fmt.Errorf("adam: Eps %v is not a finite positive number", c.Eps)
	case !(c.WeightDecay >= 0) || math.IsInf(c.WeightDecay, 1):
		return fmt.Errorf("adam: WeightDecay %v is not a finite non-negative number", c.WeightDecay)
	}
	return nil
}

// Adam is the Adam optimizer with bias correction and, for parameters marked
// Decay, decoupled weight decay (AdamW, as in PyTorch's torch.optim.AdamW).
// With step t counted from 1, learning rate lr and gradient g, each step does
//
//	p <- p - lr*WeightDecay*p        (Decay parameters only)
//	m <- Beta1*m + (1-Beta1)*g
//	v <- Beta2*v + (1-Beta2)*g*g
//	p <- p - lr * (m/(1-Beta1^t)) / (sqrt(v/(1-Beta2^t)) + Eps)
//
// in the precision T, in place, without allocating. An Adam is not safe for
// concurrent use.
type Adam[T Float] struct {
	cfg    AdamConfig
	params []Param[T]
	m, v   [][]T // first and second moments, parallel to params
	steps  int
}

// NewAdam returns an optimizer over params with zero moments. Names must be
// non-empty and unique, and each Value and Grad of equal length. The
// optimizer keeps the Value and Grad slices (not copies): the caller fills
// Grad before each Step and sees Value updated after it.
func NewAdam[T Float](params []Param[T], cfg AdamConfig) (*Adam[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(params) == 0 {
		return nil, errors.New("adam: no parameters")
	}
	a := &Adam[T]{
		cfg:    cfg,
		params: make([]Param[T], len(params)),
		m:      make([][]T, len(params)),
		v:      make([][]T, len(params)),
	}
	seen := make(map[string]bool, len(params))
	for i, p := range params {
		switch {
		case p.Name == "":
			return nil, fmt.Errorf("adam: parameter %d has no name", i)
		case seen[p.Name]:
			return nil, fmt.Errorf("adam: parameter %q appears twice", p.Name)
		case !(p.LRScale >= 0) || math.IsInf(p.LRScale, 1):
			return nil, fmt.Errorf("adam: parameter %q has learning-rate scale %v, want finite and >= 0", p.Name, p.LRScale)
		case len(p.Value) != len(p.Grad):
			return nil, fmt.Errorf("adam: parameter %q has %d values but %d gradients", p.Name, len(p.Value), len(p.Grad))
		}
		seen[p.Name] = true
		a.params[i] = p
		a.m[i] = make([]T, len(p.Value))
		a.v[i] = make([]T, len(p.Value))
	}
	return a, nil
}

// Config returns the optimizer's hyperparameters.
func (a *Adam[T]) Config() AdamConfig { return a.cfg }

// Steps returns the number of steps taken, including those restored by
// LoadState.
func (a *Adam[T]) Steps() int { return a.steps }

// Step applies one update with learning rate lr, which must be finite and
// non-negative. It does not allocate.
func (a *Adam[T]) Step(lr float64) error {
	if !(lr >= 0) || math.IsInf(lr, 1) {
		return fmt.Errorf("adam: learning rate %v is not a finite non-negative number", lr)
	}
	a.steps++
	t := float64(a.steps)
	bc1 := 1 - math.Pow(a.cfg.Beta1, t)
	bc2 := 1 - math.Pow(a.cfg.Beta2, t)
	k := adamCoeffs[T]{
		beta1:      T(a.cfg.Beta1),
		oneMinusB1: T(1 - a.cfg.Beta1),
		beta2:      T(a.cfg.Beta2),
		oneMinusB2: T(1 - a.cfg.Beta2),
		invRootBc2: T(1 / math.Sqrt(bc2)),
		eps:        T(a.cfg.Eps),
	}
	decayed := T(1 - lr*a.cfg.WeightDecay)
	for i, p := range a.params {
		keep := T(1)
		if p.Decay {
			keep = decayed
		}
		k.stepSize = T(lr / bc1)
		if p.LRScale != 0 {
			k.stepSize = T(lr * p.LRScale / bc1)
		}
		adamUpdate(p.Value, p.Grad, a.m[i], a.v[i], keep, k)
	}
	return nil
}

// adamCoeffs are the per-step scalars of the update, in precision T.
type adamCoeffs[T Float] struct {
	beta1, oneMinusB1 T
	beta2, oneMinusB2 T
	stepSize          T // lr / (1 - Beta1^t)
	invRootBc2        T // 1 / sqrt(1 - Beta2^t)
	eps               T
}

// adamUpdate updates one parameter p with gradient g and moments m, v, all of
// equal length; keep is 1 - lr*WeightDecay for decayed parameters, else 1.
func adamUpdate[T Float](p, g, m, v []T, keep T, k adamCoeffs[T]) {
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	for i := range p {
		gi := g[i]
		mi := k.beta1*m[i] + k.oneMinusB1*gi
		vi := k.beta2*v[i] + k.oneMinusB2*gi*gi
		m[i], v[i] = mi, vi
		denom := T(math.Sqrt(float64(vi)))*k.invRootBc2 + k.eps
		p[i] = keep*p[i] - k.stepSize*mi/denom
	}
}
