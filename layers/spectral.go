package layers

import (
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
	"lipformer/lipschitz"
	"lipformer/ops"
)

// initPowerIterations is how many power-iteration steps a new spectral normalisation
// runs, so that sigma is close to ||W||_2 from the first training step on.
const initPowerIterations = 50

// SpectralNorm is the spectral normalisation of a weight W (In, Out): persistent
// power-iteration vectors u (In) and v (Out) whose sigma = u^T W v estimates ||W||_2.
// Iterate refreshes them outside any graph (once per training step, more before an
// inversion); Weight adds c W / sigma to a graph, differentiable in W with u and v held
// fixed. The vectors are buffers: saved in checkpoints, never trained.
type SpectralNorm struct {
	W *Param
	U *Buffer // (In), unit
	V *Buffer // (Out), unit

	work powerWork // Iterate's working memory, kept between calls
}

// powerWork is the float64 working memory of power iteration: the vectors u (In) and v
// (Out) between steps, W v (In) and W^T u (Out).
type powerWork struct{ u, v, wv, wtu []float64 }

// NewSpectralNorm normalises w, starting from random unit vectors drawn from rng and
// refined by initPowerIterations steps.
func NewSpectralNorm(w *Param, rng *rand.Rand) *SpectralNorm {
	s := w.Value.Shape()
	sn := &SpectralNorm{W: w, U: newBuffer(w.Name+".sn_u", w.Value.Dtype(), s[0]), V: newBuffer(w.Name+".sn_v", w.Value.Dtype(), s[1])}
	for _, b := range []*Buffer{sn.U, sn.V} {
		v := make([]float64, b.Value.Shape()[0])
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		b.setFloat64s(unit(v))
	}
	sn.Iterate(initPowerIterations)
	return sn
}

// Iterate runs n steps of power iteration on W: u = W v / ||W v||, then v = W^T u /
// ||W^T u||, after which sigma = ||W^T u|| > 0. A zero W leaves the vectors unchanged.
// The steps run in float64 from the buffers' values, which receive the result; after the
// first call it allocates nothing.
func (s *SpectralNorm) Iterate(n int) {
	switch s.W.Value.Dtype() {
	case tensor.Float32:
		powerIterate(s, s.W.Value.Float32s(), n)
	case tensor.Float64:
		powerIterate(s, s.W.Value.Float64s(), n)
	}
}

// powerIterate is Iterate for a weight w (In, Out) of element type T, in s.work
// (powerIterateDense).
func powerIterate[T float32 | float64](s *SpectralNorm, w []T, n int) {
	wk := &s.work
	rows, cols := s.U.Value.Shape()[0], s.V.Value.Shape()[0]
	u, wv := grow(&wk.u, rows), grow(&wk.wv, rows)   // (In)
	v, wtu := grow(&wk.v, cols), grow(&wk.wtu, cols) // (Out)
	readFloat64s(u, s.U.Value)
	readFloat64s(v, s.V.Value)
	powerIterateDense(w, cols, u, v, wv, wtu, n)
	s.U.setFloat64s(u)
	s.V.setFloat64s(v)
}

// powerIterateDense runs n steps of power iteration (powerIterateMul) on the row-major
// matrix w (len(u), len(v)) of row stride lda: its products with the float64 vectors read
// w as it is (kernel.MulVec64, kernel.MulTVecAdd64), so that a step reads it twice and
// copies nothing.
func powerIterateDense[T float32 | float64](w []T, lda int, u, v, wv, wtu []float64, n int) {
	powerIterateMul(func(y, x []float64, trans bool) {
		if trans {
			clear(y)
			kernel.MulTVecAdd64(y, w, lda, x)
			return
		}
		kernel.MulVec64(y, w, lda, x)
	}, u, v, wv, wtu, n)
}

// powerIterateMul runs n steps of power iteration on the matrix W that mul applies (y = W
// x, or W^T x with trans) from the unit vectors u and v, with scratch wv (len(u)) and wtu
// (len(v)): u = W v / ||W v||, v = W^T u / ||W^T u||. A W v of zero leaves them unchanged.
func powerIterateMul(mul func(y, x []float64, trans bool), u, v, wv, wtu []float64, n int) {
	for range n {
		mul(wv, v, false)
		nv := norm(wv)
		if nv == 0 {
			return
		}
		scaleInto(u, wv, 1/nv)
		mul(wtu, u, true) // nonzero, since u^T W v = ||W v|| > 0
		unitInto(v, wtu)
	}
}

// grow returns (*buf)[:n], allocating *buf anew only when it is shorter than n.
func grow(buf *[]float64, n int) []float64 {
	if len(*buf) < n {
		*buf = make([]float64, n)
	}
	return (*buf)[:n]
}

// readFloat64s copies a float tensor's values into dst as float64, reading them through
// the typed accessors, which allocate nothing (Data boxes its slice).
func readFloat64s(dst []float64, t *tensor.Dense) {
	switch t.Dtype() {
	case tensor.Float32:
		for i, f := range t.Float32s() {
			dst[i] = float64(f)
		}
	case tensor.Float64:
		copy(dst, t.Float64s())
	}
}

// Sigma is the current estimate u^T W v of ||W||_2. It never exceeds ||W||_2.
func (s *SpectralNorm) Sigma() float64 {
	w, u, v := s.W.Float64s(), s.U.Float64s(), s.V.Float64s()
	var sum float64
	for i, ui := range u {
		for j, vj := range v {
			sum += ui * w[i*len(v)+j] * vj
		}
	}
	return sum
}

// Lipschitz2 is ||W||_2 / sigma, with ||W||_2 exact (SVD): the spectral norm of W / sigma,
// 1 when the vectors have converged to W's top singular pair and more before.
func (s *SpectralNorm) Lipschitz2() float64 { return lipschitz.Norm2(denseOf(s.W)) / s.Sigma() }

// Weight adds c W / sigma (In, Out) to g.
func (s *SpectralNorm) Weight(g *Graph, c float64) (*G.Node, error) {
	return ops.SpectralNormalize(g.Node(s.W), g.BufferNode(s.U), g.BufferNode(s.V), c)
}

// Buffers returns u and v.
func (s *SpectralNorm) Buffers() []*Buffer { return []*Buffer{s.U, s.V} }

// SpectralLinear is y = x W c / sigma + b: a Linear whose weight is spectrally normalised
// and scaled by C. Its 2-norm Lipschitz constant on a row is C ||W||_2 / sigma, about C.
type SpectralLinear struct {
	*Linear
	SN *SpectralNorm
	C  float64
}

// NewSpectralLinear makes a spectrally normalised Linear with weights drawn from
// N(0, std^2) and a zero bias.
func NewSpectralLinear(name string, in, out int, c, std float64, dt tensor.Dtype, rng *rand.Rand) *SpectralLinear {
	l := NewLinear(name, in, out, true, std, dt, rng)
	return &SpectralLinear{Linear: l, SN: NewSpectralNorm(l.W, rng), C: c}
}

// Forward maps x (N, In) to (N, Out).
func (l *SpectralLinear) Forward(g *Graph, x *G.Node) (*G.Node, error) {
	w, err := l.SN.Weight(g, l.C) // (In, Out)
	if err != nil {
		return nil, err
	}
	return l.apply(g, x, w)
}

// Lipschitz2 is C ||W||_2 / sigma, the exact 2-norm Lipschitz constant on one row.
func (l *SpectralLinear) Lipschitz2() float64 { return l.C * l.SN.Lipschitz2() }

// spectralWeight is the layer's weight c W / sigma as ops.SpectralMLPResidual takes it,
// its parts added to g.
func (l *SpectralLinear) spectralWeight(g *Graph) ops.SpectralWeight {
	return ops.SpectralWeight{W: g.Node(l.SN.W), U: g.BufferNode(l.SN.U), V: g.BufferNode(l.SN.V), C: l.C}
}

// unit returns x / ||x||.
func unit(x []float64) []float64 {
	out := make([]float64, len(x))
	unitInto(out, x)
	return out
}

// unitInto writes x / ||x|| into dst (len(x)).
func unitInto(dst, x []float64) { scaleInto(dst, x, 1/norm(x)) }

// scaleInto writes c x into dst (len(x)).
func scaleInto(dst, x []float64, c float64) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = c * v
	}
}

// norm is the Euclidean norm of x.
func norm(x []float64) float64 { return math.Sqrt(kernel.Dot(x, x)) }
