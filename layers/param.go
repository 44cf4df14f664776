package layers

import (
	"fmt"
	"math/rand/v2"

	"gorgonia.org/tensor"
)

// Param is a learnable tensor. Its Value is bound into every graph built from the layer, so
// an update of Value in place is seen by all of them. A layer declares its parameters,
// each with its decay and learning-rate rule, and lists them in Params in the order its
// Forward first uses them; a model's list is its layers' lists in forward order, the one
// list that gradients, checkpoints, weight decay and counts read.
type Param struct {
	Name  string
	Value *tensor.Dense
	Decay bool // weight decay applies (matrices of Linear and attention maps)
	// LRScale multiplies the learning rate of this parameter; 0 (unset) means 1, so a
	// parameter cannot be frozen this way.
	LRScale float64
}

// scalarLR is the learning-rate multiplier of attention's per-head scalars (temperatures
// and position biases): Adam moves a parameter by about the learning rate per step, and
// these must move by several units within a few thousand steps, where a matrix entry
// moves by hundredths.
const scalarLR = 10

// newParam allocates a parameter of the given shape and dtype.
func newParam(name string, dt tensor.Dtype, decay bool, shape ...int) *Param {
	return &Param{Name: name, Value: tensor.New(tensor.Of(dt), tensor.WithShape(shape...)), Decay: decay}
}

// fillNormal sets every element of p to std * N(0, 1).
func (p *Param) fillNormal(rng *rand.Rand, std float64) {
	switch v := p.Value.Data().(type) {
	case []float32:
		for i := range v {
			v[i] = float32(std * rng.NormFloat64())
		}
	case []float64:
		for i := range v {
			v[i] = std * rng.NormFloat64()
		}
	}
}

// fill sets every element of p to c.
func (p *Param) fill(c float64) {
	switch v := p.Value.Data().(type) {
	case []float32:
		for i := range v {
			v[i] = float32(c)
		}
	case []float64:
		for i := range v {
			v[i] = c
		}
	}
}

// scaleColumnBlocks multiplies column block h (columns h*width..(h+1)*width) of the matrix
// p by scales[h].
func (p *Param) scaleColumnBlocks(width int, scales []float64) {
	cols := p.Value.Shape()[1]
	switch v := p.Value.Data().(type) {
	case []float32:
		for i := range v {
			v[i] *= float32(scales[(i%cols)/width])
		}
	case []float64:
		for i := range v {
			v[i] *= scales[(i%cols)/width]
		}
	}
}

// Float64s returns a copy of the parameter's values as float64.
func (p *Param) Float64s() []float64 { return float64sOf(p.Value) }

// float64sOf copies a float tensor's values as float64.
func float64sOf(t *tensor.Dense) []float64 {
	switch v := t.Data().(type) {
	case []float32:
		out := make([]float64, len(v))
		for i, f := range v {
			out[i] = float64(f)
		}
		return out
	case []float64:
		return append([]float64(nil), v...)
	}
	return nil
}

// checkDtype returns an error unless dt is float32 or float64.
func checkDtype(dt tensor.Dtype) error {
	if dt != tensor.Float32 && dt != tensor.Float64 {
		return fmt.Errorf("layers: dtype %v, want float32 or float64", dt)
	}
	return nil
}

// nonNil returns the parameters that are not nil, in order: the list of a layer whose
// optional parameters are nil when absent.
func nonNil(ps ...*Param) []*Param {
	out := make([]*Param, 0, len(ps))
	for _, p := range ps {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}
