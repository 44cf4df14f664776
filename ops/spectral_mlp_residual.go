package ops

import (
	"errors"
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// SpectralWeight is a spectrally normalised weight as SpectralNormalize takes it: c W /
// sigma with sigma = u^T W v, W (In, Out), u (In) and v (Out) held fixed.
type SpectralWeight struct {
	W, U, V *G.Node
	C       float64
}

// SpectralMLPResidual is the MLP sub-block of an invertible block with a gain
// (layers.SpectralMLP): y = x + act(x w1 + b1) w2 + b2 with w1 = HeadScale(
// SpectralNormalize(W1), s, 1) and w2 = HeadScale(SpectralNormalize(W2), s, -1), for x (N,
// D), W1 (D, H), b1 (H), W2 (H, D), b2 (D) and the log gain s (1). It computes what
// MLPResidual of those weights computes, bit for bit, forward and backward, in one op
// forward and one backward (and five that hand out the gradients of W1, b1, W2, b2 and s)
// where the separate ops take five and eleven: a thin sub-block's weights are small, and
// making them in ops of their own cost a step of the recipe as much as their work
// (docs/performance.md, "The invertible recipe's step").
func SpectralMLPResidual(x *G.Node, w1 SpectralWeight, b1 *G.Node, w2 SpectralWeight, b2, s *G.Node, act Activation) (*G.Node, error) {
	if w1.W == nil || w2.W == nil {
		return nil, errors.New("spectral mlp residual: a weight is missing")
	}
	xs, s1, s2 := x.Shape(), w1.W.Shape(), w2.W.Shape()
	if xs.Dims() != 2 || s1.Dims() != 2 || s2.Dims() != 2 || s1[0] != xs[1] || s2[0] != s1[1] || s2[1] != xs[1] ||
		b1.Shape().Dims() != 1 || b1.Shape()[0] != s1[1] || b2.Shape().Dims() != 1 || b2.Shape()[0] != xs[1] ||
		s.Shape().Dims() != 1 || s.Shape()[0] != 1 {
		return nil, fmt.Errorf("spectral mlp residual: x %v, W1 %v, b1 %v, W2 %v, b2 %v, s %v, want (N, D), (D, H), (H), (H, D), (D), (1)",
			xs, s1, b1.Shape(), s2, b2.Shape(), s.Shape())
	}
	for i, w := range []SpectralWeight{w1, w2} {
		ws := w.W.Shape()
		if w.U == nil || w.V == nil || w.U.Shape().Dims() != 1 || w.V.Shape().Dims() != 1 || w.U.Shape()[0] != ws[0] || w.V.Shape()[0] != ws[1] {
			return nil, fmt.Errorf("spectral mlp residual: W%d %v with vectors u, v of shapes %v, %v, want (%d) and (%d)", i+1, ws, shapeOf(w.U), shapeOf(w.V), ws[0], ws[1])
		}
		if !(w.C > 0) {
			return nil, fmt.Errorf("spectral mlp residual: W%d's coefficient %g, want > 0", i+1, w.C)
		}
	}
	in := G.Nodes{x, w1.W, w1.U, w1.V, b1, w2.W, w2.U, w2.V, b2, s}
	for _, n := range in[1:] {
		if n.Dtype() != x.Dtype() {
			return nil, fmt.Errorf("spectral mlp residual: %s is %v, x %v, want one dtype", n.Name(), n.Dtype(), x.Dtype())
		}
	}
	if err := checkFloat("spectral mlp residual", x.Dtype()); err != nil {
		return nil, err
	}
	if err := checkActivation("spectral mlp residual", act, s1[1]); err != nil {
		return nil, err
	}
	op := &specMLPOp{baseOp: baseOp{name: "SpectralMLPResidual"}, part: mlpResForward, c: [2]float64{w1.C, w2.C}, st: &specMLPState{mlpResState: mlpResState{act: act}}}
	return G.ApplyOp(op, in...)
}

// shapeOf is n's shape, or nil for a missing node.
func shapeOf(n *G.Node) tensor.Shape {
	if n == nil {
		return nil
	}
	return n.Shape()
}

// The inputs of the forward, in order; the backward takes them, y and dy.
const (
	smX = iota
	smW1
	smU1
	smV1
	smB1
	smW2
	smU2
	smV2
	smB2
	smS
	smInputs
)

// smParams are the inputs whose gradients the readers hand out, by reader part.
var smParams = [5]int{smW1, smB1, smW2, smB2, smS}

// specMLPOp is one part of SpectralMLPResidual: the forward (mlpResForward), the backward
// (mlpResBackward), which returns dx, or reader k of the gradient of input smParams[k].
// The parts of one sub-block share a specMLPState, as MLPResidual's do.
type specMLPOp struct {
	baseOp
	part int
	c    [2]float64 // the coefficients of W1 and W2
	st   *specMLPState
	read reader
}

// specMLPState is what the parts of one sub-block share: MLPResidual's state, whose weight
// gradients are those of the weights w1 and w2 the op makes, and the weights and gradients
// of the normalisations and gain.
type specMLPState struct {
	mlpResState
	sigma  [2]float64 // the forward's u_i^T W_i v_i, which the backward reuses
	sn, w  [2]any     // (D, H) and (H, D) []T: c_i W_i / sigma_i and w_i, the same with the gain
	params [5]any     // []T: the gradients of W1, b1, W2, b2 and s
	dsn    [2]any     // scratch of the backward: each weight's gradient before its gain
}

// Arity is 10 forward, 12 backward and 2 for a reader (its parameter, dx).
func (op *specMLPOp) Arity() int {
	switch op.part {
	case mlpResForward:
		return smInputs
	case mlpResBackward:
		return smInputs + 2
	}
	return 2
}

// Type maps the inputs to a matrix, or a reader's parameter and dx to the parameter's
// type.
func (op *specMLPOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m, v := G.TensorType{Dims: 2, Of: a}, G.TensorType{Dims: 1, Of: a}
	fwd := []hm.Type{m, m, v, v, v, m, v, v, v, v}
	switch op.part {
	case mlpResForward:
		return hm.NewFnType(append(fwd, m)...)
	case mlpResBackward:
		return hm.NewFnType(append(fwd, m, m, m)...)
	}
	if i := smParams[op.part]; i == smB1 || i == smB2 || i == smS {
		return hm.NewFnType(v, m, v)
	}
	return hm.NewFnType(m, m, m)
}

// InferShape is x's shape, or a reader's parameter's.
func (op *specMLPOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return firstShape(op.name, in)
}

// Do runs the part into its kept buffer.
func (op *specMLPOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo runs the part into prealloc when it fits.
func (op *specMLPOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	return runShaped(op.name, &op.out, op.Arity(), prealloc, in,
		func(out []float32, ts []*tensor.Dense) error { return specMLPKernel[float32](op, out, ts) },
		func(out []float64, ts []*tensor.Dense) error { return specMLPKernel[float64](op, out, ts) })
}

// specMLPKernel computes op's part into out from its inputs ts.
func specMLPKernel[T kernel.Float](op *specMLPOp, out []T, ts []*tensor.Dense) error {
	st := op.st
	if op.part >= 0 {
		if !op.read.take(&st.bwd) {
			return fmt.Errorf("%s: no gradient of this run's backward to read", op.name)
		}
		copy(out, st.params[op.part].([]T))
		return nil
	}
	v := func(i int) []T { return data[T](ts[i]) }
	n, d, hid := ts[smX].Shape()[0], ts[smX].Shape()[1], ts[smW1].Shape()[1]
	s := v(smS)
	if op.part == mlpResForward {
		sn := [2][]T{scratch[T](&st.sn[0], d*hid), scratch[T](&st.sn[1], hid*d)}
		w := [2][]T{scratch[T](&st.w[0], d*hid), scratch[T](&st.w[1], hid*d)}
		// as SpectralNormalize, then HeadScale with powers 1 and -1
		for i, w := range [2]struct{ w, u, v, cols int }{{smW1, smU1, smV1, hid}, {smW2, smU2, smV2, d}} {
			sigma, err := spectralSigma(op.name, v(w.w), v(w.u), v(w.v), w.cols)
			if err != nil {
				return err
			}
			st.sigma[i] = sigma
			spectralScale(sn[i], v(w.w), sigma, op.c[i])
		}
		headScaleRows(w[0], sn[0], s, d, hid, 1)
		headScaleRows(w[1], sn[1], s, hid, d, -1)
		st.fwd.begin()
		h, a := activations[T](&st.mlpResState, n*hid)
		mlpResForwardKernel(st.act, v(smX), w[0], v(smB1), w[1], v(smB2), h, a, out, n, d, hid)
		st.fwd.done()
		return nil
	}
	if !op.read.take(&st.fwd) {
		return fmt.Errorf("%s: no activations of this run's forward to read", op.name)
	}
	st.bwd.begin()
	sn, w := [2][]T{st.sn[0].([]T), st.sn[1].([]T)}, [2][]T{st.w[0].([]T), st.w[1].([]T)}
	dW := [2][]T{scratch[T](&st.params[0], d*hid), scratch[T](&st.params[2], hid*d)}
	ds, dsn := scratch[T](&st.params[4], 1), [2][]T{scratch[T](&st.dsn[0], d*hid), scratch[T](&st.dsn[1], hid*d)}
	var parts [2]T
	shapes := [2]struct {
		w, u, v, rows, cols int
		p                   float64
	}{{smW1, smU1, smV1, d, hid, 1}, {smW2, smU2, smV2, hid, d, -1}}
	// weight i's gradient through its gain and normalisation, as HeadScale's backward (parts
	// 1 and 2), then SpectralNormalize's, in the job that made the gradient of w_i
	mlpResBackwardKernel(&st.mlpResState, v(smX), w[0], w[1], v(smInputs+1), out, n, d, hid, func(i int) {
		sh, gw := shapes[i], st.grads[2*i].([]T)
		headScaleRows(dsn[i], gw, s, sh.rows, sh.cols, sh.p)
		var acc [1]float64 // the one gain's
		inner := gainSpectralSums(acc[:], gw, sn[i], dsn[i], v(sh.w), sh.rows, sh.cols)
		headScaleGradSOf(parts[i:i+1], acc[:], s, sh.p)
		spectralGradOf(dW[i], v(sh.u), v(sh.v), dsn[i], sh.cols, st.sigma[i], op.c[i], inner)
	})
	st.params[1], st.params[3] = st.grads[1], st.grads[3]
	ds[0] = parts[0] + parts[1] // as Gorgonia sums the two HeadScale gradients of s
	st.bwd.done()
	return nil
}

// Kept is the number of elements the part keeps beyond its output: MLPResidual's, the
// weights it makes and the gradients of the parameters, which the parts of a sub-block
// share and the forward reports.
func (op *specMLPOp) Kept() int {
	if op.part != mlpResForward {
		return 0
	}
	st := op.st
	return st.mlpResState.kept() + scratchLen(st.sn[0], st.sn[1], st.w[0], st.w[1], st.params[0], st.params[2], st.params[4], st.dsn[0], st.dsn[1])
}

// DiffWRT is true for the inputs of the forward but the power-iteration vectors.
func (op *specMLPOp) DiffWRT(inputs int) []bool {
	d := make([]bool, inputs)
	for i := range d {
		d[i] = op.part == mlpResForward && i != smU1 && i != smV1 && i != smU2 && i != smV2
	}
	return d
}

// SymDiff applies the backward to the inputs, the output and its gradient, and a reader
// of each parameter's gradient to the backward's dx. The parts are not differentiable.
func (op *specMLPOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	if op.part != mlpResForward {
		return nil, errors.New(op.name + ": second derivatives are not implemented")
	}
	bwd := &specMLPOp{baseOp: baseOp{name: "SpectralMLPResidualGrad"}, part: mlpResBackward, c: op.c, st: op.st}
	dx, err := G.ApplyOp(bwd, append(append(G.Nodes{}, in...), out, grad)...)
	if err != nil {
		return nil, err
	}
	grads := make(G.Nodes, len(in))
	grads[smX] = dx
	for k, i := range smParams {
		r := &specMLPOp{baseOp: baseOp{name: fmt.Sprintf("SpectralMLPResidualGrad{part=%d}", k)}, part: k, c: op.c, st: op.st}
		if grads[i], err = G.ApplyOp(r, in[i], dx); err != nil {
			return nil, err
		}
	}
	return grads, nil
}

// gainSpectralSums returns the two float64 sums of a gained, normalised weight's backward,
// each as its own op sums it: into acc, per head h of the gain, the sum over column block h
// of g sn (headScaleGradS's headBlockSums), and as the result <dsn, W> (spectralGrad's),
// for g the gradient of sn f, dsn = g f and sn = c W / sigma, all (rows, cols).
func gainSpectralSums[T kernel.Float](acc []float64, g, sn, dsn, w []T, rows, cols int) (inner float64) {
	headBlockSums(acc, g, sn, rows, cols)
	return kernel.Dot(dsn, w)
}
