package ops

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// BallNorm centres every row of x (..., D) and projects it onto the ball of radius
// r = sqrt(D) e^s, with s a learned log radius of shape (1): y = u min(1, r/||u||_2), u =
// x - mean(x). It is 1-Lipschitz in each row's 2-norm at every s (docs/math.md, "The ball
// norm"); at s = 0 the ball's sphere is where LayerNorm puts every row at gain 1.
func BallNorm(x, s *G.Node) (*G.Node, error) {
	xs := x.Shape()
	if xs.Dims() < 1 {
		return nil, fmt.Errorf("ball norm: input %v has no axis", xs)
	}
	if s.Shape().TotalSize() != 1 || !s.Shape().IsVectorLike() || s.Dtype() != x.Dtype() {
		return nil, fmt.Errorf("ball norm: log radius %s is %v %v, want a %v vector of 1", s.Name(), s.Dtype(), s.Shape(), x.Dtype())
	}
	if err := checkFloat("ball norm", x.Dtype()); err != nil {
		return nil, err
	}
	return G.ApplyOp(newBallNormOp(xs.Dims(), 0), x, s)
}

// BallRadius is the radius sqrt(d) e^s of a BallNorm of rows of width d and log radius s.
func BallRadius(d int, s float64) float64 { return math.Sqrt(float64(d)) * math.Exp(s) }

// ballNormOp is BallNorm (part 0) or its gradient with respect to x (part 1) or to the log
// radius s (part 2); the gradients take (x, s, dy).
type ballNormOp struct{ partedOp }

func newBallNormOp(dims, part int) *ballNormOp {
	return &ballNormOp{newPartedOp(fmt.Sprintf("BallNorm{part=%d}", part), part, dims, 1)}
}

// Do runs the op into a new tensor.
func (op *ballNormOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo runs the op into prealloc when it fits.
func (op *ballNormOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	return op.run(op, prealloc, in)
}

// kernel32 and kernel64 are the op's partKernels.
func (op *ballNormOp) kernel32(out []float32, in [][]float32, shape tensor.Shape) {
	ballNormKernel(op, out, in, shape[op.aDims-1])
}

func (op *ballNormOp) kernel64(out []float64, in [][]float64, shape tensor.Shape) {
	ballNormKernel(op, out, in, shape[op.aDims-1])
}

// SymDiff applies the two gradient ops to (x, s, dy).
func (op *ballNormOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	return partedSymDiff(in, grad, func(part int) G.Op { return newBallNormOp(op.aDims, part) })
}

// ballNormKernel runs part op.part on in = (x, s[, dy]), rows of width d, into out; the
// radius is sqrt(d) e^s, and ds = r (d loss / d r).
func ballNormKernel[T kernel.Float](op *ballNormOp, out []T, in [][]T, d int) {
	x := in[0]
	r := BallRadius(d, float64(in[1][0]))
	switch op.part {
	case 0:
		kernel.BallNormRows(out, x, d, r)
	case 1:
		kernel.BallNormGrad(out, x, in[2], d, r)
	case 2:
		out[0] = T(r * kernel.BallNormRadiusGrad(x, in[2], d, r))
	}
}
