package ops

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// HeadScale multiplies column block h of w (D, D'), the columns h*d..(h+1)*d of head h, by
// exp(p * s_h), with s (H) and a constant power p. With p = 1 on W^Q and p = -2 on W^V it
// is tied L2 attention's per-head temperature: the logits of head h scale by exp(2 s_h)
// while its value path A_h W^{V,h} and its product bound stay the same (docs/math.md).
func HeadScale(w, s *G.Node, p float64) (*G.Node, error) {
	ws, ss := w.Shape(), s.Shape()
	if ws.Dims() != 2 || ss.Dims() != 1 || ss[0] < 1 || ws[1]%ss[0] != 0 {
		return nil, fmt.Errorf("head scale: weights %v and scales %v, want (D, D') and (H) with D' a multiple of H", ws, ss)
	}
	if s.Dtype() != w.Dtype() {
		return nil, fmt.Errorf("head scale: weights %v and scales %v of different dtypes", w.Dtype(), s.Dtype())
	}
	if err := checkFloat("head scale", w.Dtype()); err != nil {
		return nil, err
	}
	if math.IsNaN(p) || math.IsInf(p, 0) || p == 0 {
		return nil, fmt.Errorf("head scale: power %v, want finite and nonzero", p)
	}
	return G.ApplyOp(newHeadScaleOp(p, 0), w, s)
}

// headScaleOp is HeadScale (part 0) or its gradient with respect to w (part 1, a matrix) or
// s (part 2, a vector); the gradients take (w, s, g).
type headScaleOp struct {
	partedOp
	p float64
}

func newHeadScaleOp(p float64, part int) *headScaleOp {
	return &headScaleOp{newPartedOp(fmt.Sprintf("HeadScale{p=%g,part=%d}", p, part), part, 2, 1), p}
}

// Do runs the op into a new tensor.
func (op *headScaleOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo runs the op into prealloc when it fits.
func (op *headScaleOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	return op.run(op, prealloc, in)
}

// kernel32 and kernel64 are the op's partKernels.
func (op *headScaleOp) kernel32(out []float32, in [][]float32, shape tensor.Shape) {
	headScaleKernel(op, out, in, shape)
}

func (op *headScaleOp) kernel64(out []float64, in [][]float64, shape tensor.Shape) {
	headScaleKernel(op, out, in, shape)
}

// SymDiff applies the two gradient ops to (w, s, g).
func (op *headScaleOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	return partedSymDiff(in, grad, func(part int) G.Op { return newHeadScaleOp(op.p, part) })
}

// headScaleKernel computes, with f_h = exp(p s_h): part 0, w f; part 1, g f; part 2,
// p f_h sum over head h's block of g w (accumulated in float64).
func headScaleKernel[T kernel.Float](op *headScaleOp, out []T, in [][]T, shape tensor.Shape) {
	rows, cols := shape[0], shape[1]
	switch op.part {
	case 0:
		headScaleRows(out, in[0], in[1], rows, cols, op.p)
	case 1:
		headScaleRows(out, in[2], in[1], rows, cols, op.p)
	default:
		headScaleGradS(out, in[0], in[2], in[1], rows, cols, op.p)
	}
}

// headFactors are f_h = exp(p s_h).
func headFactors[T kernel.Float](s []T, p float64) []float64 {
	f := make([]float64, len(s))
	for h, v := range s {
		f[h] = math.Exp(p * float64(v))
	}
	return f
}

// headScaleRows writes y = x f into y (rows, cols): column block h of x times f_h =
// exp(p s_h).
func headScaleRows[T kernel.Float](y, x, s []T, rows, cols int, p float64) {
	f := headFactors(s, p)
	if len(s) == 1 { // one block: the whole matrix in one call, the same products
		kernel.ScaleWide(y[:rows*cols], x[:rows*cols], f[0])
		return
	}
	hd := cols / len(s)
	for i := range rows {
		for h := range s {
			kernel.ScaleWide(y[i*cols+h*hd:][:hd], x[i*cols+h*hd:][:hd], f[h])
		}
	}
}

// headScaleGradS writes into ds (H) the gradient of w f (rows, cols) with respect to s for
// the output gradient g: p f_h times the sum over head h's block of g w (headBlockSums).
func headScaleGradS[T kernel.Float](ds, w, g, s []T, rows, cols int, p float64) {
	acc := make([]float64, len(s))
	headBlockSums(acc, g, w, rows, cols)
	headScaleGradSOf(ds, acc, s, p)
}

// headBlockSums adds into acc (H) the sums over each head h's block of columns of g w (rows,
// cols), in float64: row by row, each row's block a kernel.Dot; with one head, one
// kernel.Dot of the whole matrices.
func headBlockSums[T kernel.Float](acc []float64, g, w []T, rows, cols int) {
	if len(acc) == 1 {
		acc[0] += kernel.Dot(g[:rows*cols], w[:rows*cols])
		return
	}
	hd := cols / len(acc)
	for i := range rows {
		for h := range acc {
			lo := i*cols + h*hd
			acc[h] += kernel.Dot(g[lo:lo+hd], w[lo:lo+hd])
		}
	}
}

// headScaleGradSOf writes headScaleGradS's p f_h acc_h into ds (H), given acc_h, the sum
// over head h's block of g w.
func headScaleGradSOf[T kernel.Float](ds []T, acc []float64, s []T, p float64) {
	f := headFactors(s, p)
	for h := range ds {
		ds[h] = T(p * f[h] * acc[h])
	}
}
