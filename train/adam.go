package train

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"lipformer/kernel"
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
	// Rows and Cols are the shape of a weight matrix that AdamConfig.Muon updates with Muon
	// (Value holds it row-major); 0 for every other parameter.
	Rows, Cols int
}

// AdamConfig holds the optimizer's hyperparameters other than the learning
// rate, which the caller passes to every Step.
type AdamConfig struct {
	Beta1       float64 // decay of the first-moment average, in [0, 1)
	Beta2       float64 // decay of the second-moment average, in [0, 1)
	Eps         float64 // added to the root of the second moment, > 0
	WeightDecay float64 // decoupled (AdamW) decay rate of Decay parameters, >= 0
	// Muon, when positive, updates the parameters with a matrix shape (Param.Rows) by Muon
	// at Muon times the learning rate, with the same decoupled weight decay, and the others
	// by AdamW (docs/math.md, "Muon"); 0 means AdamW for all.
	Muon float64
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
	case !(c.Muon >= 0) || math.IsInf(c.Muon, 1):
		return fmt.Errorf("adam: Muon learning-rate scale %v is not a finite non-negative number", c.Muon)
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
// in the precision T, in place, every element on its own, so that the update can be cut
// across the cores (kernel.ParallelFor, when the parameters are large enough to be worth
// it: then the goroutines are its only allocations) without changing a bit. With
// AdamConfig.Muon the matrices (Param.Rows > 0) take Muon's update instead (muonUpdate), m holding their momentum and v
// unused, several matrices at once; its products allocate the BLAS's packing buffers. An
// Adam is not safe for concurrent use.
type Adam[T Float] struct {
	cfg     AdamConfig
	params  []Param[T]
	m, v    [][]T // first and second moments, parallel to params
	steps   int
	muon    []int            // indices of the parameters Muon updates, when cfg.Muon > 0
	scratch []muonScratch[T] // one per worker of the Muon updates, grown at the first step
	// The elementwise updates as one range of elements, cut across the cores: the
	// parameters that take them, the offset of each in that range (and the total last),
	// and each one's scalars of this step.
	elem   []int
	offset []int
	coef   []kernel.AdamStep[T]
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
	off := 0
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
		case p.Rows < 0 || p.Cols < 0 || (p.Rows > 0 || p.Cols > 0) && p.Rows*p.Cols != len(p.Value):
			return nil, fmt.Errorf("adam: parameter %q has %d values, not a %d x %d matrix", p.Name, len(p.Value), p.Rows, p.Cols)
		}
		if cfg.Muon > 0 && p.Rows > 0 {
			a.muon = append(a.muon, i)
		} else {
			a.offset = append(a.offset, off)
			a.elem = append(a.elem, i)
			off += len(p.Value)
		}
		seen[p.Name] = true
		a.params[i] = p
		a.m[i] = make([]T, len(p.Value))
		a.v[i] = make([]T, len(p.Value))
	}
	a.offset = append(a.offset, off)
	a.coef = make([]kernel.AdamStep[T], len(a.elem))
	return a, nil
}

// Config returns the optimizer's hyperparameters.
func (a *Adam[T]) Config() AdamConfig { return a.cfg }

// Steps returns the number of steps taken, including those restored by
// LoadState.
func (a *Adam[T]) Steps() int { return a.steps }

// Step applies one update with learning rate lr, which must be finite and
// non-negative. Without Muon it allocates nothing but the goroutines of a cut update; with
// it, its matrix products allocate too (about one allocation per product, 15 per matrix).
func (a *Adam[T]) Step(lr float64) error {
	if !(lr >= 0) || math.IsInf(lr, 1) {
		return fmt.Errorf("adam: learning rate %v is not a finite non-negative number", lr)
	}
	a.steps++
	t := float64(a.steps)
	bc1 := 1 - math.Pow(a.cfg.Beta1, t)
	bc2 := 1 - math.Pow(a.cfg.Beta2, t)
	k := kernel.AdamStep[T]{
		Beta1:      T(a.cfg.Beta1),
		OneMinusB1: T(1 - a.cfg.Beta1),
		Beta2:      T(a.cfg.Beta2),
		OneMinusB2: T(1 - a.cfg.Beta2),
		InvRootBc2: T(1 / math.Sqrt(bc2)),
		Eps:        T(a.cfg.Eps),
	}
	decayed := T(1 - lr*a.cfg.WeightDecay)
	a.muonStep(lr * a.cfg.Muon)
	for j, i := range a.elem {
		p := a.params[i]
		k.Keep = 1
		if p.Decay {
			k.Keep = decayed
		}
		k.StepSize = T(lr / bc1)
		if p.LRScale != 0 {
			k.StepSize = T(lr * p.LRScale / bc1)
		}
		a.coef[j] = k
	}
	n := a.offset[len(a.elem)]
	if kernel.Workers(n, adamCost) == 1 { // one chunk: no closure, so a small model's step allocates nothing
		a.updateRange(0, n)
		return nil
	}
	kernel.ParallelFor(n, adamCost, func(_, lo, hi int) { a.updateRange(lo, hi) })
	return nil
}

// adamCost is the work of one element's update, in the elements of an elementwise sum
// that kernel.ParallelFor counts: a square root and a division are dearer than an add.
const adamCost = 8

// updateRange applies the elementwise update to the elements [lo, hi) of the range that
// a.offset lays the parameters out in, with this step's scalars; every element's update is
// its own, so the values do not depend on how the range is cut.
func (a *Adam[T]) updateRange(lo, hi int) {
	j := sort.SearchInts(a.offset, lo+1) - 1
	for ; j < len(a.elem) && a.offset[j] < hi; j++ {
		i, o := a.elem[j], a.offset[j]
		s, e := max(lo, o)-o, min(hi, a.offset[j+1])-o
		kernel.AdamUpdate(a.params[i].Value[s:e], a.params[i].Grad[s:e], a.m[i][s:e], a.v[i][s:e], a.coef[j])
	}
}

// muonStep updates the Muon parameters with learning rate lr, as many at once as there are
// cores; each matrix's update is computed on one goroutine, so the result does not depend
// on their number.
func (a *Adam[T]) muonStep(lr float64) {
	if len(a.muon) == 0 {
		return
	}
	w := kernel.Workers(len(a.muon), 1<<20)
	if len(a.scratch) < w {
		a.scratch = append(a.scratch, make([]muonScratch[T], w-len(a.scratch))...)
	}
	kernel.ParallelFor(len(a.muon), 1<<20, func(worker, lo, hi int) {
		for _, i := range a.muon[lo:hi] {
			muonUpdate(a.params[i], a.m[i], lr, a.cfg.WeightDecay, &a.scratch[worker])
		}
	})
}
