package ops

import (
	"errors"
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// MLPResidual is the residual MLP sub-block y = x + act(x w1 + b1) w2 + b2 as one op, for
// x (N, D), w1 (D, H), b1 (H), w2 (H, D) and b2 (D), act ELU or MaxMin (H even). It computes what
// Add(x, Linear(act(Linear(x, b1, w1)), b2, w2)) computes, bit for bit, forward and
// backward (in float32 with ELU, when H is a multiple of 8, as in every recipe: otherwise
// the last elements of a band of rows may take the portable ELU loop in place of the
// vector kernel, a last bit apart), with one op forward and one backward (and four that
// hand out the weight gradients) where those take nine and fifteen, and one parallel pass
// over bands of rows forward and two backward where those hand work to the other cores
// about ten times. It exists for stacks of thin sub-blocks (the invertible recipe's eight
// MLPs per block), whose step the separate ops' dispatch dominated: and since x feeds only
// this op, its gradient needs no sum of the skip's and the branch's parts, which Gorgonia
// adds on one core.
func MLPResidual(x, w1, b1, w2, b2 *G.Node, act Activation) (*G.Node, error) {
	xs, s1, s2 := x.Shape(), w1.Shape(), w2.Shape()
	if xs.Dims() != 2 || s1.Dims() != 2 || s2.Dims() != 2 || s1[0] != xs[1] || s2[0] != s1[1] || s2[1] != xs[1] ||
		b1.Shape().Dims() != 1 || b1.Shape()[0] != s1[1] || b2.Shape().Dims() != 1 || b2.Shape()[0] != xs[1] {
		return nil, fmt.Errorf("mlp residual: x %v, w1 %v, b1 %v, w2 %v, b2 %v, want (N, D), (D, H), (H), (H, D), (D)",
			xs, s1, b1.Shape(), s2, b2.Shape())
	}
	for _, n := range []*G.Node{w1, b1, w2, b2} {
		if n.Dtype() != x.Dtype() {
			return nil, fmt.Errorf("mlp residual: %s is %v, x %v, want one dtype", n.Name(), n.Dtype(), x.Dtype())
		}
	}
	if err := checkFloat("mlp residual", x.Dtype()); err != nil {
		return nil, err
	}
	if err := checkActivation("mlp residual", act, s1[1]); err != nil {
		return nil, err
	}
	return G.ApplyOp(&mlpResOp{baseOp: baseOp{name: "MLPResidual"}, part: mlpResForward, st: &mlpResState{act: act}}, x, w1, b1, w2, b2)
}

// Parts of the op: the forward, the backward (which returns dx and keeps the weight
// gradients), and the readers of the weight gradients, in the order of the inputs w1, b1,
// w2, b2 (parts 0 to 3).
const (
	mlpResForward  = -2
	mlpResBackward = -1
)

// mlpResOp is one part of MLPResidual. The parts of one sub-block share an mlpResState
// (see saved): the forward keeps the activations a there (and, with MaxMin, the
// pre-activations h), the backward reads them (it fails unless the forward of the same
// run wrote them) and keeps the four weight gradients there, and each reader copies out
// one of them (it fails unless the backward of the same run wrote them).
type mlpResOp struct {
	baseOp
	part int
	st   *mlpResState
	read reader // backward: the last forward it took; a reader: the last backward
}

// mlpResState is what the parts of one sub-block share.
type mlpResState struct {
	act   Activation
	h, a  any // (N, H) []T: x w1 + b1 (with MaxMin only: ELU's backward reads a) and act of it
	fwd   saved
	grads [4]any // []T: dw1 (D, H), db1 (H), dw2 (H, D), db2 (D)
	bwd   saved
	dh    any    // (N, H) []T: scratch of the backward
	part  [2]any // (H) and (D) []T: the column sums' scratch of the two weight jobs
}

// activations returns st's kept h and a for the forward (n elements each), h nil unless
// the activation's derivative needs it (Activation.keepsInput).
func activations[T kernel.Float](st *mlpResState, n int) (h, a []T) {
	if st.act.keepsInput() {
		h = scratch[T](&st.h, n)
	}
	return h, scratch[T](&st.a, n)
}

// Arity is 5 forward (x, w1, b1, w2, b2), 7 backward (the same, y and dy) and 2 for a
// reader (its weight, dx).
func (op *mlpResOp) Arity() int {
	switch op.part {
	case mlpResForward:
		return 5
	case mlpResBackward:
		return 7
	}
	return 2
}

// Type maps the inputs' tensors to a matrix, or a reader's weight and dx to the weight's
// type.
func (op *mlpResOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m, v := G.TensorType{Dims: 2, Of: a}, G.TensorType{Dims: 1, Of: a}
	switch op.part {
	case mlpResForward:
		return hm.NewFnType(m, m, v, m, v, m)
	case mlpResBackward:
		return hm.NewFnType(m, m, v, m, v, m, m, m)
	case 1, 3:
		return hm.NewFnType(v, m, v)
	}
	return hm.NewFnType(m, m, m)
}

// InferShape is x's shape, or a reader's weight's.
func (op *mlpResOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return firstShape(op.name, in)
}

// Do runs the part into its kept buffer.
func (op *mlpResOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo runs the part into prealloc when it fits.
func (op *mlpResOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	return runShaped(op.name, &op.out, op.Arity(), prealloc, in,
		func(out []float32, ts []*tensor.Dense) error { return mlpResKernel[float32](op, out, ts) },
		func(out []float64, ts []*tensor.Dense) error { return mlpResKernel[float64](op, out, ts) })
}

// mlpResKernel computes op's part into out from its inputs ts.
func mlpResKernel[T kernel.Float](op *mlpResOp, out []T, ts []*tensor.Dense) error {
	st := op.st
	if op.part >= 0 {
		if !op.read.take(&st.bwd) {
			return fmt.Errorf("%s: no gradient of this run's backward to read", op.name)
		}
		copy(out, st.grads[op.part].([]T))
		return nil
	}
	x, w1, b1, w2, b2 := data[T](ts[0]), data[T](ts[1]), data[T](ts[2]), data[T](ts[3]), data[T](ts[4])
	n, d, hid := ts[0].Shape()[0], ts[0].Shape()[1], ts[1].Shape()[1]
	if op.part == mlpResForward {
		st.fwd.begin()
		h, a := activations[T](st, n*hid)
		mlpResForwardKernel(st.act, x, w1, b1, w2, b2, h, a, out, n, d, hid)
		st.fwd.done()
		return nil
	}
	if !op.read.take(&st.fwd) {
		return fmt.Errorf("%s: no activations of this run's forward to read", op.name)
	}
	st.bwd.begin()
	mlpResBackwardKernel(st, x, w1, w2, data[T](ts[6]), out, n, d, hid, nil)
	st.bwd.done()
	return nil
}

// mlpResBackwardKernel writes into dx the gradient of the sub-block's input x for the
// output gradient dy, and into st's grads those of w1, b1, w2 and b2, from the forward's
// a (and h, with MaxMin) in st, each as the separate ops' backward computes it. It runs in
// two parallel passes: the rows' gradients by bands of rows, then the weights' gradients
// as two jobs, w1's and b1's and w2's and b2's, after each of which then(i) runs for weight
// i (nil: none).
// Every product is cut into kernel.Gemm's bands and every sum keeps its blocks, so the
// values are those of the separate ops (docs/performance.md, "The invertible recipe's
// step").
func mlpResBackwardKernel[T kernel.Float](st *mlpResState, x, w1, w2, dy, dx []T, n, d, hid int, then func(i int)) {
	a, dh := st.a.([]T), scratch[T](&st.dh, n*hid)
	var h []T // (N, H) with MaxMin, else nil
	if st.act.keepsInput() {
		h = st.h.([]T)
	}
	g := [4][]T{scratch[T](&st.grads[0], d*hid), scratch[T](&st.grads[1], hid), scratch[T](&st.grads[2], hid*d), scratch[T](&st.grads[3], d)}
	rowBands(n, d, hid, func(lo, hi int, gemm gemmFunc[T]) {
		m, dhb, dyb, dxb := hi-lo, dh[lo*hid:hi*hid], dy[lo*d:hi*d], dx[lo*d:hi*d]
		// as Linear's backward: dA = dy w2^T, then the activation's: dh = dA act'(h)
		gemm(false, true, m, hid, d, 1, dyb, d, w2, d, 0, dhb, hid)
		var hb []T
		if h != nil {
			hb = h[lo*hid : hi*hid]
		}
		activateGrad(st.act, dhb, hb, a[lo*hid:hi*hid], dhb)
		// dx = dy (the skip) + dh w1^T (the branch), added as Gorgonia adds the two parts
		gemm(false, true, m, d, hid, 1, dhb, hid, w1, hid, 0, dxb, d)
		kernel.AddSerial(dxb, dyb, dxb)
	})
	part := [2][]T{scratch[T](&st.part[0], hid), scratch[T](&st.part[1], d)}
	kernel.ParallelFor(2, n*d*hid, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			if i == 0 {
				kernel.GemmInBands(true, false, d, hid, n, 1, x, d, dh, hid, 0, g[0], hid)
				kernel.ColSumSerial(g[1], dh, part[0])
			} else {
				kernel.GemmInBands(true, false, hid, d, n, 1, a, hid, dy, d, 0, g[2], d)
				kernel.ColSumSerial(g[3], dy, part[1])
			}
			if then != nil {
				then(i)
			}
		}
	})
}

// mlpResForwardKernel writes h = x w1 + b1, a = act(h) and y = x + (a w2 + b2), each as
// Linear (the bias first, the product added to it), the activation and Add compute it, in
// one parallel pass over bands of rows. h nil (ELU) leaves h in a, then a = act(h) there.
func mlpResForwardKernel[T kernel.Float](act Activation, x, w1, b1, w2, b2, h, a, y []T, n, d, hid int) {
	rowBands(n, d, hid, func(lo, hi int, gemm gemmFunc[T]) {
		m, ab, xb, yb := hi-lo, a[lo*hid:hi*hid], x[lo*d:hi*d], y[lo*d:hi*d]
		hb := ab // ELU's pre-activations are not kept: a = elu(h) in place
		if h != nil {
			hb = h[lo*hid : hi*hid]
		}
		kernel.FillRowsSerial(hb, b1)
		gemm(false, false, m, hid, d, 1, xb, d, w1, hid, 1, hb, hid)
		activate(act, ab, hb)
		kernel.FillRowsSerial(yb, b2)
		gemm(false, false, m, d, hid, 1, ab, hid, w2, d, 1, yb, d)
		kernel.AddSerial(yb, xb, yb)
	})
}

// rowBands calls f(lo, hi, gemm) in parallel on the bands of rows in which kernel.Gemm
// computes the product of n rows of T by a (d, hid) weight (or its transpose: the same
// bands), gemm being the product f must use on its band's rows to compute Gemm's values
// bit for bit: GemmSerial on one band of several, Gemm itself when the band is every row.
func rowBands[T kernel.Float](n, d, hid int, f func(lo, hi int, gemm gemmFunc[T])) {
	band := kernel.GemmBand[T](n, hid, d)
	if band >= n {
		f(0, n, kernel.Gemm[T])
		return
	}
	kernel.ParallelFor((n+band-1)/band, band*d*hid, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			f(b*band, min(n, (b+1)*band), kernel.GemmSerial[T])
		}
	})
}

// gemmFunc is kernel.Gemm's signature.
type gemmFunc[T kernel.Float] func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// Kept is the number of elements the part keeps beyond its output: the forward's a (and h
// with MaxMin) and the backward's dh and weight gradients, which the parts of a sub-block
// share and the forward reports.
func (op *mlpResOp) Kept() int {
	if op.part != mlpResForward {
		return 0
	}
	return op.st.kept()
}

// kept is the number of elements of the state's buffers.
func (st *mlpResState) kept() int {
	return scratchLen(append([]any{st.h, st.a, st.dh}, st.grads[:]...)...)
}

// checkActivation returns an error unless act is known and, for MaxMin, the hidden width
// hid is even.
func checkActivation(name string, act Activation, hid int) error {
	if act != ActELU && act != ActMaxMin {
		return fmt.Errorf("%s: unknown activation %v", name, act)
	}
	if act == ActMaxMin && hid%2 != 0 {
		return fmt.Errorf("%s: MaxMin pairs hidden units, hidden width %d is odd", name, hid)
	}
	return nil
}

// scratchLen is the number of elements of the []float32 and []float64 among vs.
func scratchLen(vs ...any) int {
	n := 0
	for _, v := range vs {
		switch s := v.(type) {
		case []float32:
			n += len(s)
		case []float64:
			n += len(s)
		}
	}
	return n
}

// scratch returns the []T held in *p, made anew when it is missing or not of size n.
func scratch[T kernel.Float](p *any, n int) []T {
	if s, ok := (*p).([]T); ok && len(s) == n {
		return s
	}
	s := make([]T, n)
	*p = s
	return s
}

// DiffWRT is true for the five inputs of the forward.
func (op *mlpResOp) DiffWRT(inputs int) []bool {
	d := make([]bool, inputs)
	for i := range d {
		d[i] = op.part == mlpResForward
	}
	return d
}

// SymDiff applies the backward to the inputs, the output and its gradient, and a reader
// of each weight gradient to the backward's dx. The parts are not differentiable.
func (op *mlpResOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	if op.part != mlpResForward {
		return nil, errors.New(op.name + ": second derivatives are not implemented")
	}
	dx, err := G.ApplyOp(&mlpResOp{baseOp: baseOp{name: "MLPResidualGrad"}, part: mlpResBackward, st: op.st}, append(append(G.Nodes{}, in...), out, grad)...)
	if err != nil {
		return nil, err
	}
	grads := G.Nodes{dx, nil, nil, nil, nil}
	for k := range 4 {
		r := &mlpResOp{baseOp: baseOp{name: fmt.Sprintf("MLPResidualGrad{part=%d}", k)}, part: k, st: op.st}
		if grads[1+k], err = G.ApplyOp(r, in[1+k], dx); err != nil {
			return nil, err
		}
	}
	return grads, nil
}
