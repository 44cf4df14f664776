package ops

import (
	"errors"
	"fmt"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// Linear is x [w_1 | ... | w_k] + b: x (N, In), each weight w_i (In, Out_i), and b a
// vector (Out_1 + ... + Out_k) or nil for no bias. Block i of the (N, Out_1 + ... + Out_k)
// result, columns Out_1 + ... + Out_{i-1} onwards, is x w_i: a packed projection (queries,
// keys and values side by side) reads its weights where they are, without the concatenated
// copy that G.Concat would make on every run. Unlike G.Mul, the op writes into a buffer it
// keeps between runs, and so do its backward ops: dx = sum_i dy_i w_i^T, dw_i = x^T dy_i
// and db the column sums of dy, dy_i being block i of the output gradient.
func Linear(x, b *G.Node, ws ...*G.Node) (*G.Node, error) { return linear(x, b, ws, false) }

// LinearT is Linear with each weight stored transposed: x [w_1^T | ... | w_k^T] + b with
// w_i (Out_i, In). An embedding table (V, D) used as the output layer gives the logits
// LinearT(x, nil, table) (N, V) without a transposed copy of the table.
func LinearT(x, b *G.Node, ws ...*G.Node) (*G.Node, error) { return linear(x, b, ws, true) }

// linear checks the inputs of Linear (trans false) or LinearT and applies the op.
func linear(x, b *G.Node, ws []*G.Node, trans bool) (*G.Node, error) {
	xs := x.Shape()
	if xs.Dims() != 2 {
		return nil, fmt.Errorf("linear: input %v, want (N, In)", xs)
	}
	if len(ws) == 0 {
		return nil, errors.New("linear: no weight")
	}
	out := 0
	for _, w := range ws {
		s := w.Shape()
		if s.Dims() != 2 || s[inAxis(trans)] != xs[1] || w.Dtype() != x.Dtype() {
			want := fmt.Sprintf("(%d, Out)", xs[1])
			if trans {
				want = fmt.Sprintf("(Out, %d)", xs[1])
			}
			return nil, fmt.Errorf("linear: weight %s is %v %v, want a %v matrix %s", w.Name(), w.Dtype(), s, x.Dtype(), want)
		}
		out += s[1-inAxis(trans)]
	}
	in := append(G.Nodes{x}, ws...)
	if b != nil {
		if b.Dims() != 1 || b.Shape()[0] != out || b.Dtype() != x.Dtype() {
			return nil, fmt.Errorf("linear: bias %s is %v %v, want a %v vector (%d)", b.Name(), b.Dtype(), b.Shape(), x.Dtype(), out)
		}
		in = append(in, b)
	}
	if err := checkFloat("linear", x.Dtype()); err != nil {
		return nil, err
	}
	return G.ApplyOp(newLinearOp(linearForward, len(ws), b != nil, trans, 0, 0), in...)
}

// inAxis is the axis of a weight matching the input's width: 0 for (In, Out), 1 for a
// transposed weight (Out, In).
func inAxis(trans bool) int {
	if trans {
		return 1
	}
	return 0
}

// linearMode selects what a linearOp computes.
type linearMode int

const (
	linearForward linearMode = iota // (x, w_1..w_k[, b]) -> x [w_1 | ... | w_k] + b
	linearGradX                     // (w_1..w_k, dy) -> dx (N, In)
	linearGradW                     // (x, dy) -> dw_i, from columns off..off+n of dy
)

// linearOp is the forward op of Linear or one of its backward ops.
type linearOp struct {
	baseOp
	mode   linearMode
	k      int  // number of weights (forward, gradient of x)
	bias   bool // forward: a bias input follows the weights
	trans  bool // the weights are stored (Out, In)
	off, n int  // gradient of a weight: its block is columns off..off+n of dy
}

func newLinearOp(mode linearMode, k int, bias, trans bool, off, n int) *linearOp {
	t := ""
	if trans {
		t = "T"
	}
	var name string
	switch mode {
	case linearForward:
		name = fmt.Sprintf("Linear%s{k=%d,bias=%t}", t, k, bias)
	case linearGradX:
		name = fmt.Sprintf("Linear%sGradX{k=%d}", t, k)
	default:
		name = fmt.Sprintf("Linear%sGradW{cols=%d:%d}", t, off, off+n)
	}
	return &linearOp{baseOp: baseOp{name: name}, mode: mode, k: k, bias: bias, trans: trans, off: off, n: n}
}

// outWidth is the number of output columns of a weight of shape s.
func (op *linearOp) outWidth(s tensor.Shape) int { return s[1-inAxis(op.trans)] }

// Arity is 1 + k (+1 with a bias) forward, k + 1 for the gradient of x and 2 for the
// gradient of a weight.
func (op *linearOp) Arity() int {
	switch op.mode {
	case linearForward:
		if op.bias {
			return op.k + 2
		}
		return op.k + 1
	case linearGradX:
		return op.k + 1
	}
	return 2
}

// Type maps matrices (and a bias vector) to a matrix.
func (op *linearOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := G.TensorType{Dims: 2, Of: a}
	ts := make(hm.Types, op.Arity()+1)
	for i := range ts {
		ts[i] = m
	}
	if op.mode == linearForward && op.bias {
		ts[op.k+1] = tensorType(1, a)
	}
	return hm.NewFnType(ts...)
}

// InferShape is (N, Out_1 + ... + Out_k) forward, (N, In) for dx and a weight's shape,
// (In, n) or (n, In), for its gradient.
func (op *linearOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != op.Arity() {
		return nil, fmt.Errorf("%s: %d inputs, want %d", op.name, len(in), op.Arity())
	}
	shape := func(i int) (tensor.Shape, error) {
		s, ok := in[i].(tensor.Shape)
		if !ok || s.Dims() != 2 {
			return nil, fmt.Errorf("%s: input %d has shape %v, want a matrix", op.name, i, in[i])
		}
		return s, nil
	}
	switch op.mode {
	case linearForward:
		x, err := shape(0)
		if err != nil {
			return nil, err
		}
		out := 0
		for i := 1; i <= op.k; i++ {
			w, err := shape(i)
			if err != nil {
				return nil, err
			}
			out += op.outWidth(w)
		}
		return tensor.Shape{x[0], out}, nil
	case linearGradX:
		w, err := shape(0)
		if err != nil {
			return nil, err
		}
		dy, err := shape(op.k)
		if err != nil {
			return nil, err
		}
		return tensor.Shape{dy[0], w[inAxis(op.trans)]}, nil
	}
	x, err := shape(0)
	if err != nil {
		return nil, err
	}
	if op.trans {
		return tensor.Shape{op.n, x[1]}, nil
	}
	return tensor.Shape{x[1], op.n}, nil
}

// Do runs the op into its kept buffer.
func (op *linearOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo runs the op into prealloc when it fits.
func (op *linearOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	if len(in) != op.Arity() {
		return nil, fmt.Errorf("%s: %d inputs, want %d", op.name, len(in), op.Arity())
	}
	ts := make([]*tensor.Dense, len(in))
	for i := range ts {
		var err error
		if ts[i], err = dense(op.name, in, i); err != nil {
			return nil, err
		}
	}
	shapes := make([]G.DimSizer, len(ts))
	for i, t := range ts {
		shapes[i] = t.Shape()
	}
	shape, err := op.InferShape(shapes...)
	if err != nil {
		return nil, err
	}
	y := op.out.get(prealloc, ts[0].Dtype(), shape, in)
	switch y.Dtype() {
	case tensor.Float32:
		linearKernel[float32](op, y, ts)
	case tensor.Float64:
		linearKernel[float64](op, y, ts)
	}
	return y, nil
}

// linearKernel computes op's result into y from its inputs ts, by matrix products on the
// blocks in place (row-major, strided). A weight w_i is (In, Out_i), or (Out_i, In) with
// op.trans.
func linearKernel[T kernel.Float](op *linearOp, y *tensor.Dense, ts []*tensor.Dense) {
	out := data[T](y)
	switch op.mode {
	case linearForward: // y_i = x w_i, or x w_i^T
		x := ts[0]
		n, in, cols := x.Shape()[0], x.Shape()[1], y.Shape()[1]
		var beta T
		if op.bias { // every row starts as b, the products add to it
			kernel.FillRows(out, data[T](ts[op.k+1]))
			beta = 1
		}
		off := 0
		for _, w := range ts[1 : op.k+1] {
			wc := op.outWidth(w.Shape())
			kernel.Gemm(false, op.trans, n, wc, in, 1, data[T](x), in, data[T](w), w.Shape()[1], beta, out[off:], cols)
			off += wc
		}
	case linearGradX: // dx = sum_i dy_i w_i^T, or dy_i w_i
		dy := ts[op.k]
		n, cols, in := dy.Shape()[0], dy.Shape()[1], y.Shape()[1]
		off := 0
		for i, w := range ts[:op.k] {
			wc := op.outWidth(w.Shape())
			var beta T
			if i > 0 {
				beta = 1
			}
			kernel.Gemm(false, !op.trans, n, in, wc, 1, data[T](dy)[off:], cols, data[T](w), w.Shape()[1], beta, out, in)
			off += wc
		}
	case linearGradW: // dw = x^T dy_i, or dy_i^T x
		x, dy := ts[0], ts[1]
		n, in, cols := x.Shape()[0], x.Shape()[1], dy.Shape()[1]
		if op.trans {
			kernel.Gemm(true, false, op.n, in, n, 1, data[T](dy)[op.off:], cols, data[T](x), in, 0, out, in)
			return
		}
		kernel.Gemm(true, false, in, op.n, n, 1, data[T](x), in, data[T](dy)[op.off:], cols, 0, out, op.n)
	}
}

// DiffWRT is true for every input of the forward op.
func (op *linearOp) DiffWRT(inputs int) []bool {
	d := make([]bool, inputs)
	for i := range d {
		d[i] = op.mode == linearForward
	}
	return d
}

// SymDiff applies the backward ops: dx from the weights and dy, each dw_i from x and dy,
// db as the column sums of dy. The backward ops are not differentiable.
func (op *linearOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	if op.mode != linearForward {
		return nil, errors.New(op.name + ": second derivatives are not implemented")
	}
	ws := in[1 : op.k+1]
	grads := make(G.Nodes, len(in))
	var err error
	if grads[0], err = G.ApplyOp(newLinearOp(linearGradX, op.k, false, op.trans, 0, 0), append(append(G.Nodes{}, ws...), grad)...); err != nil {
		return nil, err
	}
	off := 0
	for i, w := range ws {
		n := op.outWidth(w.Shape())
		if grads[1+i], err = G.ApplyOp(newLinearOp(linearGradW, 1, false, op.trans, off, n), in[0], grad); err != nil {
			return nil, err
		}
		off += n
	}
	if op.bias {
		if grads[op.k+1], err = colSum(grad, 2); err != nil {
			return nil, err
		}
	}
	return grads, nil
}
