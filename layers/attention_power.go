package layers

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"lipformer/lipschitz"
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
	wq, wv, wo, err := a.rawBoundWeights()
	if err != nil || !finiteMats(append(append([]*mat.Dense{wo}, wq...), wv...)...) {
		return
	}
	dim := a.WQ.Value.Shape()[0]
	d := dim / a.Heads
	uq, vq := a.Power.UQ.Float64s(), a.Power.VQ.Float64s()
	for h := range a.Heads {
		powerIterateDense(wq[h], uq[h*dim:(h+1)*dim], vq[h*d:(h+1)*d], n)
	}
	un, vn := a.Power.UN.Float64s(), a.Power.VN.Float64s()
	powerIterateDense(lipschitz.StackedN(wq, wv, wo), un, vn, n)
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

// powerIterateDense runs n steps of power iteration on w from the unit vectors u and v:
// u = w v / ||w v||, v = w^T u / ||w^T u||. A zero w leaves them unchanged.
func powerIterateDense(w *mat.Dense, u, v []float64, n int) {
	uv, vv := mat.NewVecDense(len(u), u), mat.NewVecDense(len(v), v)
	var wv, wtu mat.VecDense
	for range n {
		wv.MulVec(w, vv)
		if mat.Norm(&wv, 2) == 0 {
			return
		}
		uv.ScaleVec(1/mat.Norm(&wv, 2), &wv)
		wtu.MulVec(w.T(), uv)
		vv.ScaleVec(1/mat.Norm(&wtu, 2), &wtu)
	}
}
