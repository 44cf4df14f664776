// Package gradcheck compares the gradients Gorgonia computes through a graph with central
// finite differences, in float64. Tests of ops and layers use it.
package gradcheck

import (
	"fmt"
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Input is one input of the function under test.
type Input struct {
	Name   string
	Value  *tensor.Dense // float64, or int for inputs without a gradient
	NoGrad bool          // true for inputs that are not differentiated (integer targets)
}

// Build builds the function under test on g from the input nodes, in the order given.
type Build func(g *G.ExprGraph, in []*G.Node) (*G.Node, error)

// Result is the outcome of a check: for each differentiated input, the relative error
// ||analytic - numeric|| / max(||analytic||, ||numeric||) (0 when both vanish).
type Result struct {
	RelErr map[string]float64
	Max    float64
}

// Check builds L = sum(f(x) * R) for a fixed random R drawn from seed (L = f(x) when f is a
// scalar), takes its gradient with Gorgonia's Grad, and compares it with central
// differences of step h. The input tensors are perturbed in place and restored.
func Check(build Build, inputs []Input, seed uint64, h float64) (Result, error) {
	g := G.NewGraph()
	nodes := make([]*G.Node, len(inputs))
	var wrt G.Nodes
	for i, in := range inputs {
		nodes[i] = G.NodeFromAny(g, in.Value, G.WithName(in.Name))
		if !in.NoGrad {
			if in.Value.Dtype() != tensor.Float64 {
				return Result{}, fmt.Errorf("gradcheck: input %s is %v, want float64", in.Name, in.Value.Dtype())
			}
			wrt = append(wrt, nodes[i])
		}
	}
	out, err := build(g, nodes)
	if err != nil {
		return Result{}, err
	}
	loss, err := weightedSum(g, out, seed)
	if err != nil {
		return Result{}, err
	}
	grads, err := G.Grad(loss, wrt...)
	if err != nil {
		return Result{}, fmt.Errorf("gradcheck: Grad: %w", err)
	}
	values := make([]G.Value, len(grads))
	for i, gr := range grads {
		G.Read(gr, &values[i])
	}
	var lossVal G.Value
	G.Read(loss, &lossVal)
	m := G.NewTapeMachine(g)
	defer m.Close()
	run := func() (float64, error) {
		m.Reset()
		if err := m.RunAll(); err != nil {
			return 0, err
		}
		return lossVal.Data().(float64), nil
	}
	if _, err := run(); err != nil {
		return Result{}, fmt.Errorf("gradcheck: run: %w", err)
	}
	analytic := make([][]float64, len(values))
	for i, v := range values {
		analytic[i] = floats(v)
	}
	res := Result{RelErr: map[string]float64{}}
	k := 0
	for _, in := range inputs {
		if in.NoGrad {
			continue
		}
		x := in.Value
		n := x.DataSize()
		if x.IsScalar() {
			n = 1
		}
		numeric := make([]float64, n)
		for j := range numeric {
			orig := x.Get(j).(float64)
			x.Set(j, orig+h)
			fp, err := run()
			if err != nil {
				return Result{}, err
			}
			x.Set(j, orig-h)
			fm, err := run()
			if err != nil {
				return Result{}, err
			}
			x.Set(j, orig)
			numeric[j] = (fp - fm) / (2 * h)
		}
		e := relErr(analytic[k], numeric)
		res.RelErr[in.Name] = e
		res.Max = math.Max(res.Max, e)
		k++
	}
	return res, nil
}

// floats copies a value's data (a tensor or a scalar) as []float64.
func floats(v G.Value) []float64 {
	switch d := v.Data().(type) {
	case []float64:
		return append([]float64(nil), d...)
	case float64:
		return []float64{d}
	}
	return nil
}

// weightedSum returns sum(out * R) for a random R of out's shape, or out itself if scalar.
func weightedSum(g *G.ExprGraph, out *G.Node, seed uint64) (*G.Node, error) {
	if out.IsScalar() {
		return out, nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	r := make([]float64, out.Shape().TotalSize())
	for i := range r {
		r[i] = rng.NormFloat64()
	}
	rt := tensor.New(tensor.WithShape(out.Shape().Clone()...), tensor.WithBacking(r))
	rn := G.NodeFromAny(g, rt, G.WithName("R"))
	prod, err := G.HadamardProd(out, rn)
	if err != nil {
		return nil, err
	}
	return G.Sum(prod)
}

// relErr is ||a - b|| / max(||a||, ||b||), or 0 when both are zero.
func relErr(a, b []float64) float64 {
	var d, na, nb float64
	for i := range a {
		d += (a[i] - b[i]) * (a[i] - b[i])
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	den := math.Sqrt(math.Max(na, nb))
	if den == 0 {
		return 0
	}
	return math.Sqrt(d) / den
}

// Rand returns a float64 tensor of the given shape with entries scale * N(0, 1) from seed.
func Rand(seed uint64, scale float64, shape ...int) *tensor.Dense {
	rng := rand.New(rand.NewPCG(seed, 1))
	n := tensor.Shape(shape).TotalSize()
	v := make([]float64, n)
	for i := range v {
		v[i] = scale * rng.NormFloat64()
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
}
