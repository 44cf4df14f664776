package ops

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// L2Values maps the query and value weights of tied L2 attention, wq and wv (D, D) with
// head h in columns h*d..(h+1)*d, to the value weights that L2 attention applies to its
// input: column block h of the result is A_h W^{V,h} = W^{Q,h} (W^{Q,h})^T W^{V,h} / sqrt(d)
// (docs/math.md, "Bounds of tied L2 attention"). Then X L2Values(wq, wv) holds every head's Q_h M_h, so the value path
// costs one (B*T, D) x (D, D) product.
func L2Values(wq, wv *G.Node, heads int) (*G.Node, error) {
	s := wq.Shape()
	if s.Dims() != 2 || !wv.Shape().Eq(s) || heads < 1 || s[1]%heads != 0 {
		return nil, fmt.Errorf("l2 values: wq %v and wv %v with %d heads, want equal (D, D') shapes, D' a multiple of the heads", s, wv.Shape(), heads)
	}
	if err := checkFloat("l2 values", wq.Dtype()); err != nil {
		return nil, err
	}
	return G.ApplyOp(newL2ValuesOp(heads, 0), wq, wv)
}

// l2ValuesOp is the forward op of L2Values (part 0) or its backward with respect to wq
// (part 1) or wv (part 2), which take (wq, wv, g).
type l2ValuesOp struct {
	partedOp
	heads int
	ws    kernel.Workspace
}

func newL2ValuesOp(heads, part int) *l2ValuesOp {
	return &l2ValuesOp{partedOp: newPartedOp(fmt.Sprintf("L2Values{H=%d,part=%d}", heads, part), part, 2, 2), heads: heads}
}

// Do runs the op into a new tensor.
func (op *l2ValuesOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo runs the op into prealloc when it fits.
func (op *l2ValuesOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	return op.run(op, prealloc, in)
}

// kernel32 and kernel64 are the op's partKernels.
func (op *l2ValuesOp) kernel32(out []float32, in [][]float32, shape tensor.Shape) {
	l2ValuesKernel(op, out, in, shape)
}

func (op *l2ValuesOp) kernel64(out []float64, in [][]float64, shape tensor.Shape) {
	l2ValuesKernel(op, out, in, shape)
}

// SymDiff applies the two backward ops to (wq, wv, g).
func (op *l2ValuesOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	return partedSymDiff(in, grad, func(part int) G.Op { return newL2ValuesOp(op.heads, part) })
}

// floats returns the data of each tensor as []T.
func floats[T kernel.Float](ts []*tensor.Dense) [][]T {
	out := make([][]T, len(ts))
	for i, t := range ts {
		out[i] = data[T](t)
	}
	return out
}

// l2ValuesKernel computes, per head with s = 1/sqrt(d), B = Wq^T Wv (d, d) and G the
// gradient block: part 0, Wq B s; part 1, s (G B^T + Wv G^T Wq); part 2, s Wq (Wq^T G).
func l2ValuesKernel[T kernel.Float](op *l2ValuesOp, out []T, in [][]T, shape tensor.Shape) {
	rows, cols := shape[0], shape[1]
	d := cols / op.heads
	s := T(1 / math.Sqrt(float64(d)))
	// the heads as jobs, each writing its own columns of out with its worker's scratch: a
	// head's products are too small to be split, and one after the other they kept the
	// other core waiting
	workers := kernel.Workers(op.heads, 4*rows*d*d)
	bufs := kernel.Scratch[T](&op.ws, workers, 2*d*d) // (d, d) twice a worker
	kernel.ParallelJobs(op.heads, workers, func(w, h int) {
		b1, b2 := bufs[w][:d*d], bufs[w][d*d:]
		wq, wv, o := in[0][h*d:], in[1][h*d:], out[h*d:]
		switch op.part {
		case 0:
			kernel.Gemm(true, false, d, d, rows, 1, wq, cols, wv, cols, 0, b1, d)
			kernel.Gemm(false, false, rows, d, d, s, wq, cols, b1, d, 0, o, cols)
		case 1:
			g := in[2][h*d:]
			kernel.Gemm(true, false, d, d, rows, 1, wq, cols, wv, cols, 0, b1, d)
			kernel.Gemm(true, false, d, d, rows, 1, g, cols, wq, cols, 0, b2, d)
			kernel.Gemm(false, true, rows, d, d, s, g, cols, b1, d, 0, o, cols)
			kernel.Gemm(false, false, rows, d, d, s, wv, cols, b2, d, 1, o, cols)
		case 2:
			g := in[2][h*d:]
			kernel.Gemm(true, false, d, d, rows, 1, wq, cols, g, cols, 0, b1, d)
			kernel.Gemm(false, false, rows, d, d, s, wq, cols, b1, d, 0, o, cols)
		}
	})
}
