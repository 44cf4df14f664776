package search

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// DefaultHVPStep is the default step of the Hessian-vector products of
// Objective (see NewObjective).
const DefaultHVPStep = 1e-5

// Objective is f(X) = ||J(X)||_p of a Map, with its gradient from first-order
// derivatives only. Both norms are ||J^T w||_q for a weight vector w chosen
// at X:
//
//   - inf-norm: w = e_{i*} with i* the first row of largest absolute sum, and
//     q = 1: f = sum_k |J_{i*k}|;
//   - 2-norm: w = u, the top left singular vector, and q = 2: f = ||J^T u||.
//
// For any fixed w, g(X) = J(X)^T w is the gradient of w . F, so
// ||g||_q has gradient H d, with H the Hessian of w . F and d = sign(g) (q = 1)
// or g / ||g|| (q = 2); where the choice of w is locally constant (and, for the
// 2-norm, by the envelope theorem) that is the gradient of f. Each
// Hessian-vector product H d is the central difference
// (J^T w (X + e d) - J^T w (X - e d)) / (2e) of two exact vector-Jacobian
// products, computed in one Map.VJP call, with e = h / (max(1, ||X||_inf)
// ||d||_inf): its error is O(e^2). The step shrinks with ||X|| because the
// logits of dot-product attention bend on a length 1/||X||.
//
// ValueGrad computes the whole Jacobian and chooses w; Partial keeps the last
// w and costs three VJPs, O(N) for a Scalar on the inf-norm instead of O(N^2).
// Its value ||J^T w||_q is still at most ||J||_p, a valid lower bound.
//
// The 2-norm is found by topSingular, exactly by an SVD for small Jacobians,
// else by power iteration warm-started from the previous call. An Objective
// is not safe for concurrent use.
type Objective struct {
	m      Map
	norm   Norm
	step   float64
	jac    *mat.Dense
	top    *topSingular
	chosen bool        // w has been chosen by ValueGrad
	g, dir []float64   // J^T w at the current point, and the direction d
	xs, ds [][]float64 // X +- e d, and their VJPs
	us     [][]float64 // the VJP weights: w, twice
}

// NewObjective returns ||J||_p of m; h is the Hessian-vector product step
// (h <= 0 chooses DefaultHVPStep).
func NewObjective(m Map, norm Norm, h float64) (*Objective, error) {
	if norm != NormInf && norm != Norm2 {
		return nil, fmt.Errorf("search: unknown norm %v", norm)
	}
	if math.IsNaN(h) || math.IsInf(h, 0) {
		return nil, fmt.Errorf("search: HVP step %v, want finite", h)
	}
	if h <= 0 {
		h = DefaultHVPStep
	}
	k := m.Len()
	o := &Objective{m: m, norm: norm, step: h, jac: mat.NewDense(k, k, nil), g: make([]float64, k), dir: make([]float64, k)}
	if norm == Norm2 {
		o.top = newTopSingular(k)
	}
	for range 2 {
		o.xs = append(o.xs, make([]float64, k))
		o.ds = append(o.ds, make([]float64, k))
	}
	w := make([]float64, k)
	o.us = [][]float64{w, w}
	return o, nil
}

// Norm is the objective's norm.
func (o *Objective) Norm() Norm { return o.norm }

// Value returns ||J(x)||_p.
func (o *Objective) Value(x []float64) (float64, error) {
	if err := o.m.Jacobian(x, o.jac); err != nil {
		return 0, err
	}
	if o.norm == Norm2 {
		return o.top.of(o.jac), nil
	}
	value, _ := maxAbsRow(o.jac)
	return value, nil
}

// ValueGrad returns ||J(x)||_p, writes its gradient with respect to x into
// grad, and keeps the weight vector w for Partial.
func (o *Objective) ValueGrad(x, grad []float64) (float64, error) {
	if err := checkVec("grad", grad, o.m.Len()); err != nil {
		return 0, err
	}
	if _, err := o.Value(x); err != nil {
		return 0, err
	}
	w := o.us[0]
	if o.norm == Norm2 {
		copy(w, o.top.u.RawVector().Data)
		gv := mat.NewVecDense(len(o.g), o.g)
		gv.MulVec(o.jac.T(), o.top.u)
	} else {
		_, row := maxAbsRow(o.jac)
		clear(w)
		w[row] = 1
		copy(o.g, o.jac.RawRowView(row))
	}
	o.chosen = true
	return o.gradient(x, grad)
}

// Partial returns ||J(x)^T w||_q for the w of the last ValueGrad call (at
// another input) and writes its gradient into grad. The value is at most
// ||J(x)||_p. It returns an error before any ValueGrad call.
func (o *Objective) Partial(x, grad []float64) (float64, error) {
	if !o.chosen {
		return 0, errors.New("search: Partial before ValueGrad")
	}
	if err := checkVec("grad", grad, o.m.Len()); err != nil {
		return 0, err
	}
	if err := o.m.VJP([][]float64{x}, o.us[:1], [][]float64{o.g}); err != nil {
		return 0, err
	}
	return o.gradient(x, grad)
}

// gradient returns ||g||_q for g = J^T w at x and writes its gradient H d
// into grad.
func (o *Objective) gradient(x, grad []float64) (float64, error) {
	value := 0.0
	for k, e := range o.g {
		if o.norm == Norm2 {
			value += e * e
		} else {
			value += math.Abs(e)
			o.dir[k] = sign(e)
		}
	}
	if o.norm == Norm2 {
		value = math.Sqrt(value)
		for k, e := range o.g {
			o.dir[k] = e / value
		}
	}
	if value == 0 {
		clear(grad)
		return 0, nil
	}
	return value, o.hvp(x, o.dir, grad)
}

// hvp writes H_w dir into grad, w being o.us[0], by central differences of
// VJPs.
func (o *Objective) hvp(x, dir, grad []float64) error {
	xScale, dScale := 1.0, 0.0
	for k := range x {
		xScale = math.Max(xScale, math.Abs(x[k]))
		dScale = math.Max(dScale, math.Abs(dir[k]))
	}
	e := o.step / (xScale * dScale)
	for k := range x {
		o.xs[0][k] = x[k] + e*dir[k]
		o.xs[1][k] = x[k] - e*dir[k]
	}
	if err := o.m.VJP(o.xs, o.us, o.ds); err != nil {
		return err
	}
	for k := range grad {
		grad[k] = (o.ds[0][k] - o.ds[1][k]) / (2 * e)
	}
	return nil
}

// maxAbsRow returns the largest absolute row sum of j and the first row that
// has it.
func maxAbsRow(j *mat.Dense) (float64, int) {
	best, row := -1.0, 0
	r, _ := j.Dims()
	for i := range r {
		s := 0.0
		for _, e := range j.RawRowView(i) {
			s += math.Abs(e)
		}
		if s > best {
			best, row = s, i
		}
	}
	return best, row
}

// sign is -1, 0 or 1.
func sign(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
