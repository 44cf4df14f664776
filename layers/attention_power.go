package layers

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"

	"lipformer/kernel"
	"lipformer/lipschitz"
	"lipformer/ops"
)

// AttnPower holds the persistent power-iteration vectors of a tied L2 layer's token-norm
// bound (ops.L2BoundTok2): the top singular pair of every head's query map W^{Q,h} (D, d)
// and of N (D, D), which stacks the heads' (W^{Q,h})^T W^{V,h} W^{O,h} / sqrt(d). Like a
// SpectralNorm's, the vectors are buffers: saved in checkpoints, never trained.
type AttnPower struct {
	UQ *Buffer // (H, D)
	VQ *Buffer // (H, d)
	UN *Buffer // (D)
	VN *Buffer // (D)

	work attnPowerWork // PowerIterate's float64 vectors and scratch, kept from step to step
}

// attnPowerWork is the float64 memory of a layer's power iteration.
type attnPowerWork struct {
	uq, vq, un, vn []float64 // (H*D), (H*d), (D), (D): the buffers' vectors
	long, nu       []float64 // (D): W^{Q,h} v, then N v and N^T u
	short          []float64 // (d): (W^{Q,h})^T u
	tmp            []float64 // (D + d): stackedNMulVec's scratch
}

// AddPower gives a tied L2 layer the power-iteration vectors of its token-norm bound,
// started from constant unit vectors and refined by initPowerIterations steps.
func (a *Attention) AddPower(name string) {
	dim := a.WQ.Value.Shape()[0]
	d, dt := dim/a.Heads, a.WQ.Value.Dtype()
	p := &AttnPower{UQ: newBuffer(name+".pow_uq", dt, a.Heads, dim), VQ: newBuffer(name+".pow_vq", dt, a.Heads, d),
		UN: newBuffer(name+".pow_un", dt, dim), VN: newBuffer(name+".pow_vn", dt, dim),
		work: attnPowerWork{uq: make([]float64, a.Heads*dim), vq: make([]float64, a.Heads*d), un: make([]float64, dim),
			vn: make([]float64, dim), long: make([]float64, dim), nu: make([]float64, dim), short: make([]float64, d),
			tmp: make([]float64, dim+d)}}
	for _, b := range []*Buffer{p.UQ, p.VQ, p.UN, p.VN} {
		s := b.Value.Shape()
		v := make([]float64, s.TotalSize())
		for i := range v {
			v[i] = 1 / math.Sqrt(float64(s[len(s)-1]))
		}
		b.setFloat64s(v)
	}
	a.Power = p
	a.PowerIterate(initPowerIterations)
}

// PowerIterate runs n steps of power iteration on every W^{Q,h} and on N at the layer's
// current weights before its temperatures (those the token2 bound reads), updating the
// vectors in place. It does nothing for a layer without them, or with weights that are
// not finite (which leave the vectors as they were); it allocates nothing.
func (a *Attention) PowerIterate(n int) {
	if a.Power == nil || a.Kind != ops.L2 {
		return
	}
	switch a.WQ.Value.Dtype() {
	case tensor.Float32:
		attnPowerIterate(a, a.WQ.Value.Float32s(), a.WV.Value.Float32s(), a.WO.Value.Float32s(), n)
	case tensor.Float64:
		attnPowerIterate(a, a.WQ.Value.Float64s(), a.WV.Value.Float64s(), a.WO.Value.Float64s(), n)
	}
}

// attnPowerIterate is PowerIterate on the layer's weights wq, wv and wo (D, D), read as
// they are: head h's maps are columns h*d..(h+1)*d of wq and wv, and rows h*d..(h+1)*d of
// wo.
func attnPowerIterate[T float32 | float64](a *Attention, wq, wv, wo []T, n int) {
	dim := a.WQ.Value.Shape()[0]
	d := dim / a.Heads
	w := &a.Power.work
	uq, vq, un, vn := w.uq, w.vq, w.un, w.vn
	readFloat64s(uq, a.Power.UQ.Value)
	readFloat64s(vq, a.Power.VQ.Value)
	readFloat64s(un, a.Power.UN.Value)
	readFloat64s(vn, a.Power.VN.Value)
	for h := range a.Heads { // W^{Q,h}: (D, d) of stride D
		powerIterateDense(wq[h*d:], dim, uq[h*dim:(h+1)*dim], vq[h*d:(h+1)*d], w.long, w.short, n)
	}
	powerIterateMul(func(y, x []float64, trans bool) {
		stackedNMulVec(y, wq, wv, wo, a.Heads, x, trans, w.tmp)
	}, un, vn, w.long, w.nu, n)
	// A weight that is not finite makes every later product it enters infinite or NaN
	// (an infinite entry times a zero is NaN), so the vectors it reached are not finite.
	if !allFinite(uq) || !allFinite(vq) || !allFinite(un) || !allFinite(vn) {
		return
	}
	a.Power.UQ.setFloat64s(uq)
	a.Power.VQ.setFloat64s(vq)
	a.Power.UN.setFloat64s(un)
	a.Power.VN.setFloat64s(vn)
}

// stackedNMulVec writes into y (D) N x, or N^T x with trans, for N = lipschitz.StackedN of
// the weights wq, wv and wo (D, D) laid out as attnPowerIterate reads them, without forming
// N: per head, three products of a (D, d) block with a vector, 3 D d multiply-adds, where
// forming N takes 2 D^2 d. Power iteration on N needs these products alone. tmp is
// scratch of D + d elements.
func stackedNMulVec[T float32 | float64](y []float64, wq, wv, wo []T, heads int, x []float64, trans bool, tmp []float64) {
	dim := len(x)
	d := dim / heads
	inv := 1 / math.Sqrt(float64(d))
	long, short := tmp[:dim], tmp[dim:dim+d]
	if trans {
		clear(y)
	}
	for h := range heads {
		if !trans { // N_h x = (W^{Q,h})^T (W^{V,h} (W^{O,h} x)) / sqrt(d)
			kernel.MulVec64(short, wo[h*d*dim:], dim, x)
			kernel.MulVec64(long, wv[h*d:], dim, short)
			floats.Scale(inv, long)
			out := y[h*d : (h+1)*d]
			clear(out)
			kernel.MulTVecAdd64(out, wq[h*d:], dim, long)
			continue
		}
		// N_h^T x_h = (W^{O,h})^T ((W^{V,h})^T (W^{Q,h} x_h)) / sqrt(d), summed over h
		kernel.MulVec64(long, wq[h*d:], dim, x[h*d:(h+1)*d])
		clear(short)
		kernel.MulTVecAdd64(short, wv[h*d:], dim, long)
		floats.Scale(inv, short)
		kernel.MulTVecAdd64(y, wo[h*d*dim:], dim, short)
	}
}

// allFinite reports whether every element of x is finite.
func allFinite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// tok2Estimate is the token-norm bound that training divides by: the power-iteration
// estimates u^T W v in place of the spectral norms (ops.L2BoundTok2), at the weights before
// the temperatures.
func (a *Attention) tok2Estimate() (float64, error) {
	if a.Power == nil {
		return 0, fmt.Errorf("%s: the token-norm bound needs power-iteration vectors (AddPower)", a.WQ.Name)
	}
	wq, wv, wo, err := a.rawBoundWeights()
	if err != nil {
		return 0, err
	}
	dim := wo.RawMatrix().Rows
	d := dim / a.Heads
	uq, vq := a.Power.UQ.Float64s(), a.Power.VQ.Float64s()
	bias := a.biasRows()
	if bias != nil && len(bias[0]) < a.BoundLen {
		return 0, fmt.Errorf("%s: position bias over %d offsets for a bound on %d tokens", a.WQ.Name, len(bias[0]), a.BoundLen)
	}
	sum := 0.0
	for h := range a.Heads {
		s := lipschitz.HeadConstTok2(bias, h, a.BoundLen) * mat.Inner(mat.NewVecDense(dim, uq[h*dim:(h+1)*dim]), wq[h], mat.NewVecDense(d, vq[h*d:(h+1)*d]))
		sum += s * s
	}
	sigma := mat.Inner(mat.NewVecDense(dim, a.Power.UN.Float64s()), lipschitz.StackedN(wq, wv, wo), mat.NewVecDense(dim, a.Power.VN.Float64s()))
	return math.Sqrt(sum) * sigma, nil
}

// Buffers returns the vectors.
func (p *AttnPower) Buffers() []*Buffer { return []*Buffer{p.UQ, p.VQ, p.UN, p.VN} }
