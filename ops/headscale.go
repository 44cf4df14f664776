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
	vals, err := op.inputs(in)
	if err != nil {
		return nil, err
	}
	out := op.out.get(prealloc, vals[0].Dtype(), op.outShape(vals), in)
	switch vals[0].Dtype() {
	case tensor.Float32:
		headScaleKernel(op, data[float32](out), floats[float32](vals), vals[0].Shape())
	case tensor.Float64:
		headScaleKernel(op, data[float64](out), floats[float64](vals), vals[0].Shape())
	}
	return out, nil
}

// SymDiff applies the two gradient ops to (w, s, g).
func (op *headScaleOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	return partedSymDiff(in, grad, func(part int) G.Op { return newHeadScaleOp(op.p, part) })
}

// headScaleKernel computes, with f_h = exp(p s_h): part 0, w f; part 1, g f; part 2,
// p f_h sum over head h's block of g w (accumulated in float64).
func headScaleKernel[T kernel.Float](op *headScaleOp, out []T, in [][]T, shape tensor.Shape) {
	rows, cols := shape[0], shape[1]
	s := in[1]
	hd := cols / len(s)
	f := make([]float64, len(s))
	for h, v := range s {
		f[h] = math.Exp(op.p * float64(v))
	}
	if op.part == 2 {
		acc := make([]float64, len(s))
		w, g := in[0], in[2]
		for i := range rows {
			for h := range s {
				gs, ws := g[i*cols+h*hd:][:hd], w[i*cols+h*hd:][:hd]
				a := acc[h]
				for j, v := range gs {
					a += float64(v) * float64(ws[j])
				}
				acc[h] = a
			}
		}
		for h := range out {
			out[h] = T(op.p * f[h] * acc[h])
		}
		return
	}
	x := in[0]
	if op.part == 1 {
		x = in[2]
	}
	for i := range rows {
		for h := range s {
			xs, ys, fh := x[i*cols+h*hd:][:hd], out[i*cols+h*hd:][:hd], f[h]
			for j, v := range xs {
				ys[j] = T(float64(v) * fh)
			}
		}
	}
}
