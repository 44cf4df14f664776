package layers

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"

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

	work *weights64 // PowerIterate's float64 weights and scratch, kept from step to step
}

// weights64 holds a tied L2 layer's weights before its temperatures as float64 matrices,
// as its bounds read them (rawBoundWeights), and the power iteration's scratch.
type weights64 struct {
	wq, wv []*mat.Dense // (D, d) per head
	wo     *mat.Dense   // (D, D)
	nv, nu []float64    // (D): N v and N^T u, the power iteration's scratch
	tmp    []float64    // (D + d): lipschitz.StackedNMulVec's scratch
}

// load fills w with a's weights before its temperatures, allocating them on first use; a
// is a tied L2 layer.
func (w *weights64) load(a *Attention) {
	dim := a.WQ.Value.Shape()[0]
	d := dim / a.Heads
	if w.wo == nil {
		w.wq, w.wv = make([]*mat.Dense, a.Heads), make([]*mat.Dense, a.Heads)
		for h := range a.Heads {
			w.wq[h], w.wv[h] = mat.NewDense(dim, d, nil), mat.NewDense(dim, d, nil)
		}
		w.wo = mat.NewDense(dim, dim, nil)
	}
	for h := range a.Heads {
		headColumns64(w.wq[h].RawMatrix().Data, a.WQ.Value, dim, h*d, d)
		headColumns64(w.wv[h].RawMatrix().Data, a.WV.Value, dim, h*d, d)
	}
	headColumns64(w.wo.RawMatrix().Data, a.WO.Value, dim, 0, dim)
}

// headColumns64 writes columns from..from+d of t (rows, cols), as float64, into dst (rows, d).
func headColumns64(dst []float64, t *tensor.Dense, cols, from, d int) {
	switch v := t.Data().(type) {
	case []float32:
		for i := range len(dst) / d {
			for j, x := range v[i*cols+from : i*cols+from+d] {
				dst[i*d+j] = float64(x)
			}
		}
	case []float64:
		for i := range len(dst) / d {
			copy(dst[i*d:(i+1)*d], v[i*cols+from:i*cols+from+d])
		}
	}
}

// AddPower gives a tied L2 layer the power-iteration vectors of its token-norm bound,
// started from constant unit vectors and refined by initPowerIterations steps.
func (a *Attention) AddPower(name string) {
	dim := a.WQ.Value.Shape()[0]
	d, dt := dim/a.Heads, a.WQ.Value.Dtype()
	p := &AttnPower{UQ: newBuffer(name+".pow_uq", dt, a.Heads, dim), VQ: newBuffer(name+".pow_vq", dt, a.Heads, d),
		UN: newBuffer(name+".pow_un", dt, dim), VN: newBuffer(name+".pow_vn", dt, dim)}
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
// not finite (which leave the vectors as they were).
func (a *Attention) PowerIterate(n int) {
	if a.Power == nil {
		return
	}
	if a.Kind != ops.L2 {
		return
	}
	if a.Power.work == nil {
		dim := a.WQ.Value.Shape()[0]
		a.Power.work = &weights64{nv: make([]float64, dim), nu: make([]float64, dim), tmp: make([]float64, dim+dim/a.Heads)}
	}
	w := a.Power.work
	w.load(a)
	if !finiteMats(append(append([]*mat.Dense{w.wo}, w.wq...), w.wv...)...) {
		return
	}
	dim := a.WQ.Value.Shape()[0]
	d := dim / a.Heads
	uq, vq := a.Power.UQ.Float64s(), a.Power.VQ.Float64s()
	for h := range a.Heads {
		powerIterateDense(w.wq[h], uq[h*dim:(h+1)*dim], vq[h*d:(h+1)*d], n)
	}
	un, vn := a.Power.UN.Float64s(), a.Power.VN.Float64s()
	// on N = lipschitz.StackedN without forming it: its products with vectors are all the
	// iteration needs, at 3 D d multiply-adds a head against 2 D^2 d for N itself
	powerIterateMul(func(y, x []float64, trans bool) {
		lipschitz.StackedNMulVec(y, w.wq, w.wv, w.wo, x, trans, w.tmp)
	}, un, vn, w.nv, w.nu, n)
	a.Power.UQ.setFloat64s(uq)
	a.Power.VQ.setFloat64s(vq)
	a.Power.UN.setFloat64s(un)
	a.Power.VN.setFloat64s(vn)
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

// finiteMats reports whether every entry of the matrices is finite.
func finiteMats(ms ...*mat.Dense) bool {
	for _, m := range ms {
		for _, x := range m.RawMatrix().Data {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return false
			}
		}
	}
	return true
}

// Buffers returns the vectors.
func (p *AttnPower) Buffers() []*Buffer { return []*Buffer{p.UQ, p.VQ, p.UN, p.VN} }

// powerIterateDense runs n steps of power iteration on w from the unit vectors u and v
// (powerIterateMul).
func powerIterateDense(w *mat.Dense, u, v []float64, n int) {
	rows, cols := w.Dims()
	powerIterateMul(func(y, x []float64, trans bool) {
		var m mat.Matrix = w
		if trans {
			m = w.T()
		}
		mat.NewVecDense(len(y), y).MulVec(m, mat.NewVecDense(len(x), x))
	}, u, v, make([]float64, rows), make([]float64, cols), n)
}

// powerIterateMul runs n steps of power iteration on the matrix W that mul applies (y = W
// x, or W^T x with trans) from the unit vectors u and v, with scratch wv (len(u)) and wtu
// (len(v)): u = W v / ||W v||, v = W^T u / ||W^T u||. A W v of zero leaves them unchanged.
func powerIterateMul(mul func(y, x []float64, trans bool), u, v, wv, wtu []float64, n int) {
	for range n {
		mul(wv, v, false)
		norm := floats.Norm(wv, 2)
		if norm == 0 {
			return
		}
		floats.ScaleTo(u, 1/norm, wv)
		mul(wtu, u, true)
		floats.ScaleTo(v, 1/floats.Norm(wtu, 2), wtu)
	}
}
