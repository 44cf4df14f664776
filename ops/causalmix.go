package ops

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// CausalMix mixes each sequence of seqLen rows of x (B*T, D) along time with the k causal
// taps a = softmax(r), r (k): output row t is sum over delta = 0..min(k-1, t) of
// a_delta x_{t-delta} (docs/math.md, "The mixing sub-block"). The taps are positive and
// sum to at most 1, so the map is 1-Lipschitz in the token norm.
func CausalMix(x, r *G.Node, seqLen int) (*G.Node, error) {
	xs, rs := x.Shape(), r.Shape()
	if xs.Dims() != 2 || rs.Dims() != 1 || seqLen < 1 || xs[0]%seqLen != 0 || rs[0] < 1 || rs[0] > seqLen {
		return nil, fmt.Errorf("causal mix: input %v and taps %v for sequences of %d, want (B*T, D) with T = %d and (k) with 1 <= k <= T", xs, rs, seqLen, seqLen)
	}
	if x.Dtype() != r.Dtype() {
		return nil, fmt.Errorf("causal mix: input %v and taps %v of different dtypes", x.Dtype(), r.Dtype())
	}
	if err := checkFloat("causal mix", x.Dtype()); err != nil {
		return nil, err
	}
	return G.ApplyOp(newCausalMixOp(seqLen, 0), x, r)
}

// causalMixOp is CausalMix (part 0) or its gradient with respect to x (part 1) or r (part
// 2); the gradients take (x, r, dy).
type causalMixOp struct {
	partedOp
	t int // T, rows per sequence
}

func newCausalMixOp(t, part int) *causalMixOp {
	return &causalMixOp{newPartedOp(fmt.Sprintf("CausalMix{T=%d,part=%d}", t, part), part, 2, 1), t}
}

// Do runs the op into a new tensor.
func (op *causalMixOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo runs the op into prealloc when it fits.
func (op *causalMixOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	return op.run(op, prealloc, in)
}

// kernel32 and kernel64 are the op's partKernels.
func (op *causalMixOp) kernel32(out []float32, in [][]float32, shape tensor.Shape) {
	causalMixKernel(op, out, in, shape[1])
}

func (op *causalMixOp) kernel64(out []float64, in [][]float64, shape tensor.Shape) {
	causalMixKernel(op, out, in, shape[1])
}

// SymDiff applies the two gradient ops to (x, r, dy).
func (op *causalMixOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	return partedSymDiff(in, grad, func(part int) G.Op { return newCausalMixOp(op.t, part) })
}

// causalMixKernel computes, for rows of width d and a = softmax(r): part 0 the mix of x;
// part 1 its transpose applied to dy; part 2 the softmax's Jacobian applied to
// da_delta = sum_t dy_t . x_{t-delta}, dr = a (da - a . da).
func causalMixKernel[T kernel.Float](op *causalMixOp, out []T, in [][]T, d int) {
	a := MixTaps(in[1])
	switch op.part {
	case 0:
		kernel.CausalMixRows(out, in[0], a, op.t, d)
	case 1:
		kernel.CausalMixGradInput(out, in[2], a, op.t, d)
	default:
		da := kernel.CausalMixGradTaps(in[0], in[2], len(a), op.t, d)
		dot := 0.0
		for j, v := range da {
			dot += float64(a[j]) * v
		}
		for j, v := range da {
			out[j] = T(float64(a[j]) * (v - dot))
		}
	}
}

// MixTaps is the causal mix's taps softmax(r), computed in float64.
func MixTaps[T kernel.Float](r []T) []T {
	m := math.Inf(-1)
	for _, v := range r {
		m = max(m, float64(v))
	}
	e, s := make([]float64, len(r)), 0.0
	for j, v := range r {
		e[j] = math.Exp(float64(v) - m)
		s += e[j]
	}
	a := make([]T, len(r))
	for j := range e {
		a[j] = T(e[j] / s)
	}
	return a
}
