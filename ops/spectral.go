package ops

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// SpectralNormalize returns c W / sigma for a weight w (In, Out), with sigma = u^T W v the
// spectral norm estimate of persistent power-iteration vectors u (In) and v (Out). The
// vectors are inputs held fixed within a step (power iteration runs outside the graph);
// the gradient flows to W through both W and sigma, as in spectral normalisation (Miyato
// et al. 2018). When u and v are the top singular vectors of W, sigma = ||W||_2 and the
// result has spectral norm c. It fails at run time unless sigma is finite and positive.
func SpectralNormalize(w, u, v *G.Node, c float64) (*G.Node, error) {
	s := w.Shape()
	if s.Dims() != 2 || !u.Shape().IsVectorLike() || !v.Shape().IsVectorLike() ||
		u.Shape().TotalSize() != s[0] || v.Shape().TotalSize() != s[1] {
		return nil, fmt.Errorf("spectral normalize: w %v, u %v, v %v, want (In, Out), (In) and (Out)", s, u.Shape(), v.Shape())
	}
	if u.Dtype() != w.Dtype() || v.Dtype() != w.Dtype() {
		return nil, fmt.Errorf("spectral normalize: w %v, u %v, v %v, want one dtype", w.Dtype(), u.Dtype(), v.Dtype())
	}
	if !(c > 0) {
		return nil, fmt.Errorf("spectral normalize: coefficient %g, want > 0", c)
	}
	if err := checkFloat("spectral normalize", w.Dtype()); err != nil {
		return nil, err
	}
	return G.ApplyOp(newSpectralOp(c, u.Dims(), false), w, u, v)
}

// spectralOp is SpectralNormalize (w, u, v) -> c W / sigma, or (grad) its gradient with
// respect to W, (w, u, v, dy) -> dW.
type spectralOp struct {
	baseOp
	c     float64
	vdims int // rank of u and v as the graph holds them
	grad  bool
}

func newSpectralOp(c float64, vdims int, grad bool) *spectralOp {
	return &spectralOp{baseOp{name: fmt.Sprintf("SpectralNormalize{c=%g,grad=%t}", c, grad)}, c, vdims, grad}
}

// Arity is 3, or 4 for the gradient.
func (op *spectralOp) Arity() int {
	if op.grad {
		return 4
	}
	return 3
}

// Type maps (matrix, vector, vector[, matrix]) to a matrix.
func (op *spectralOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m, vec := G.TensorType{Dims: 2, Of: a}, tensorType(op.vdims, a)
	if op.grad {
		return hm.NewFnType(m, vec, vec, m, m)
	}
	return hm.NewFnType(m, vec, vec, m)
}

// InferShape is W's shape.
func (op *spectralOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}

// Do runs the op into a new tensor.
func (op *spectralOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo runs the op into prealloc when it fits.
func (op *spectralOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	ts, err := denseInputs(op.name, in, op.Arity())
	if err != nil {
		return nil, err
	}
	w := ts[0]
	out := op.out.get(prealloc, w.Dtype(), w.Shape(), in)
	switch w.Dtype() {
	case tensor.Float32:
		err = spectralKernel(op, data[float32](out), ts, w.Shape()[1])
	case tensor.Float64:
		err = spectralKernel(op, data[float64](out), ts, w.Shape()[1])
	}
	return out, err
}

// DiffWRT is true for W only: u and v are held fixed.
func (op *spectralOp) DiffWRT(int) []bool { return []bool{true, false, false} }

// SymDiff is dW = (c/sigma) (dy - (<dy, W> / sigma) u v^T).
func (op *spectralOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	dw, err := G.ApplyOp(newSpectralOp(op.c, op.vdims, true), in[0], in[1], in[2], grad)
	return G.Nodes{dw, nil, nil}, err
}

// spectralKernel writes c W / sigma, or its gradient, into out; ts holds w, u, v[, dy] and
// cols is W's number of columns.
func spectralKernel[T kernel.Float](op *spectralOp, out []T, ts []*tensor.Dense, cols int) error {
	w, u, v := data[T](ts[0]), data[T](ts[1]), data[T](ts[2])
	sigma, err := spectralSigma(op.name, w, u, v, cols)
	if err != nil {
		return err
	}
	if !op.grad {
		spectralScale(out, w, sigma, op.c)
		return nil
	}
	spectralGrad(out, w, u, v, data[T](ts[3]), cols, sigma, op.c)
	return nil
}

// spectralSigma is u^T W v for W with cols columns, or an error naming op unless it is
// finite and positive.
func spectralSigma[T kernel.Float](op string, w, u, v []T, cols int) (float64, error) {
	sigma := kernel.Bilinear(w, u, v, cols)
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return 0, fmt.Errorf("%s: spectral norm estimate u^T W v = %g, want finite and > 0 (run power iteration first)", op, sigma)
	}
	return sigma, nil
}

// spectralScale writes c W / sigma into out.
func spectralScale[T kernel.Float](out, w []T, sigma, c float64) { kernel.Scale(out, w, T(c/sigma)) }

// spectralGrad writes the gradient of c W / sigma with respect to W, (c/sigma) (dy -
// (<dy, W> / sigma) u v^T), into out, for sigma = u^T W v (spectralSigma).
func spectralGrad[T kernel.Float](out, w, u, v, dy []T, cols int, sigma, c float64) {
	spectralGradOf(out, u, v, dy, cols, sigma, c, kernel.Dot(dy, w)) // <dy, W>
}

// spectralGradOf is spectralGrad given inner = <dy, W>.
func spectralGradOf[T kernel.Float](out, u, v, dy []T, cols int, sigma, c, inner float64) {
	s := T(c / sigma)
	k := inner / sigma
	for i, ui := range u {
		kernel.ScaleDiffWide(out[i*cols:][:len(v)], dy[i*cols:][:len(v)], v, k*float64(ui), s)
	}
}
