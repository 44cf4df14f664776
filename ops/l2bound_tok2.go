package ops

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
	"lipformer/lipschitz"
)

// L2BoundTok2 is the token-norm bound of tied L2 multihead attention on sequences of n
// tokens (docs/math.md, "The token-norm bound"), as a differentiable scalar of wq, wv and
// wo (D, D), head h in columns h*d..(h+1)*d, and of an optional position bias (H, T):
//
//	sqrt(sum_h k_h^2 s_h^2) * sigma_N,   k_h = 1 + 4 W_0(S_h / e),
//
// with s_h = uq_h^T W^{Q,h} vq_h and sigma_N = un^T N vn the power-iteration estimates of
// ||W^{Q,h}||_2 and ||N||_2, N (D, D) stacking N_h = (W^{Q,h})^T W^{V,h} W^{O,h} / sqrt(d),
// and S_h = n - 1 without a bias, sum_{delta=1}^{n-1} exp(b_h[delta] - b_h[0]) with one
// (T >= n). uq is (H, D), vq (H, d), un and vn (D); they are held fixed (no gradient), as
// in spectral normalisation. bias may be nil.
func L2BoundTok2(wq, wv, wo, uq, vq, un, vn, bias *G.Node, heads, n int) (*G.Node, error) {
	s := wq.Shape()
	if s.Dims() != 2 || s[0] != s[1] || !wv.Shape().Eq(s) || !wo.Shape().Eq(s) || heads < 1 || s[1]%heads != 0 {
		return nil, fmt.Errorf("l2 token-norm bound: wq %v, wv %v, wo %v with %d heads, want (D, D) each, D a multiple of the heads", s, wv.Shape(), wo.Shape(), heads)
	}
	d := s[0]
	for _, v := range []struct {
		name  string
		n     *G.Node
		shape tensor.Shape
	}{{"uq", uq, tensor.Shape{heads, d}}, {"vq", vq, tensor.Shape{heads, d / heads}}, {"un", un, tensor.Shape{d}}, {"vn", vn, tensor.Shape{d}}} {
		if !v.n.Shape().Eq(v.shape) || v.n.Dtype() != wq.Dtype() {
			return nil, fmt.Errorf("l2 token-norm bound: %s %v of %v, want %v of %v", v.name, v.n.Shape(), v.n.Dtype(), v.shape, wq.Dtype())
		}
	}
	if err := checkFloat("l2 token-norm bound", wq.Dtype()); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("l2 token-norm bound: sequence length %d, want >= 1", n)
	}
	in := G.Nodes{wq, wv, wo, uq, vq, un, vn}
	if bias != nil {
		if s := bias.Shape(); s.Dims() != 2 || s[0] != heads || s[1] < n || bias.Dtype() != wq.Dtype() {
			return nil, fmt.Errorf("l2 token-norm bound: bias %v of %v, want (%d, T >= %d) of %v", s, bias.Dtype(), heads, n, wq.Dtype())
		}
		in = append(in, bias)
	}
	return G.ApplyOp(newTok2Op(heads, n, bias != nil, -1), in...)
}

// tok2Op is L2BoundTok2 (part -1) or its gradient with respect to wq, wv, wo or the bias
// (part 0, 1, 2, 3), which takes the inputs, the bound (only so that it runs after the
// bound of the same run) and the scalar g. A differentiated bound shares keptFactors with
// its gradient ops (see saved): it keeps its factors there, and each gradient op reuses
// them if the bound wrote them since that op's last run, and recomputes them otherwise.
type tok2Op struct {
	baseOp
	heads, n int
	bias     bool
	part     int
	st       *keptFactors // shared by a differentiated bound and its gradient ops: a tok2Bound
	read     reader       // gradient: the last factors it took
}

func newTok2Op(heads, n int, bias bool, part int) *tok2Op {
	return &tok2Op{baseOp: baseOp{name: fmt.Sprintf("L2BoundTok2{H=%d,n=%d,bias=%t,part=%d}", heads, n, bias, part)}, heads: heads, n: n, bias: bias, part: part}
}

// inputs is 7, or 8 with a bias.
func (op *tok2Op) inputs() int {
	if op.bias {
		return 8
	}
	return 7
}

// Arity is the inputs forward, and two more (the bound and g) backward.
func (op *tok2Op) Arity() int {
	if op.part < 0 {
		return op.inputs()
	}
	return op.inputs() + 2
}

// Type maps three matrices, two matrices of vectors, two vectors and the bias matrix to a
// scalar, or with two scalars more to a matrix.
func (op *tok2Op) Type() hm.Type {
	a := hm.TypeVariable('a')
	m, v := G.TensorType{Dims: 2, Of: a}, G.TensorType{Dims: 1, Of: a}
	ts := []hm.Type{m, m, m, m, m, v, v}
	if op.bias {
		ts = append(ts, m)
	}
	if op.part < 0 {
		return hm.NewFnType(append(ts, a)...)
	}
	return hm.NewFnType(append(ts, a, a, m)...)
}

// InferShape is a scalar forward, (D, D) backward and the bias's shape for part 3.
func (op *tok2Op) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	switch {
	case op.part < 0:
		return tensor.ScalarShape(), nil
	case op.part == 3:
		return in[7].(tensor.Shape).Clone(), nil
	}
	return in[0].(tensor.Shape).Clone(), nil
}

// Do computes the bound or its gradient.
func (op *tok2Op) Do(in ...G.Value) (G.Value, error) {
	w := make([]*tensor.Dense, op.inputs())
	for i := range w {
		var err error
		if w[i], err = dense(op.name, in, i); err != nil {
			return nil, err
		}
	}
	g := 0.0
	if op.part >= 0 {
		var err error
		if g, err = scalar(in[op.inputs()+1]); err != nil {
			return nil, fmt.Errorf("%s: %w", op.name, err)
		}
	}
	switch w[0].Dtype() {
	case tensor.Float32:
		return tok2Do[float32](op, w, in, g), nil
	case tensor.Float64:
		return tok2Do[float64](op, w, in, g), nil
	}
	return nil, fmt.Errorf("%s: dtype %v, want float32 or float64", op.name, w[0].Dtype())
}

// tok2Do is Do for element type T.
func tok2Do[T kernel.Float](op *tok2Op, w []*tensor.Dense, in []G.Value, g float64) G.Value {
	var bias []T
	if op.bias {
		bias = data[T](w[7])
	}
	factors := func() tok2Bound[T] {
		return tok2Factors(data[T](w[0]), data[T](w[1]), data[T](w[2]), data[T](w[3]), data[T](w[4]), data[T](w[5]), data[T](w[6]), bias, w[0].Shape()[0], op.heads, op.n)
	}
	if op.part < 0 {
		f := factors()
		if op.st != nil {
			op.st.keep(f)
		}
		if w[0].Dtype() == tensor.Float32 {
			return G.NewF32(float32(f.bound))
		}
		return G.NewF64(f.bound)
	}
	f, ok := op.st.take(&op.read).(tok2Bound[T])
	if ok { // the bound's inputs are this op's: read them from here
		f.wq, f.wv, f.wo, f.uq, f.vq, f.un, f.vn, f.bias = data[T](w[0]), data[T](w[1]), data[T](w[2]), data[T](w[3]), data[T](w[4]), data[T](w[5]), data[T](w[6]), bias
	} else {
		f = factors()
	}
	shape := w[0].Shape()
	if op.part == 3 {
		shape = w[7].Shape()
	}
	out := op.out.get(nil, w[0].Dtype(), shape, in)
	f.grad(data[T](out), op.part, g)
	return out
}

// DiffWRT is true for the three weights and the bias, false for the power-iteration
// vectors.
func (op *tok2Op) DiffWRT(int) []bool {
	d := []bool{true, true, true, false, false, false, false}
	if op.bias {
		d = append(d, true)
	}
	return d
}

// SymDiff applies the gradient ops to the inputs, the bound and its gradient.
func (op *tok2Op) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	ds := make(G.Nodes, op.inputs())
	for i, diff := range op.DiffWRT(0) {
		if !diff {
			continue
		}
		part := i
		if i == 7 {
			part = 3
		}
		var err error
		if ds[i], err = G.ApplyOp(op.gradOp(part), append(append(G.Nodes{}, in...), out, grad)...); err != nil {
			return nil, err
		}
	}
	return ds, nil
}

// gradOp returns the gradient op of part of the bound op, sharing op's state, in which op
// then keeps its factors.
func (op *tok2Op) gradOp(part int) *tok2Op {
	if op.st == nil {
		op.st = &keptFactors{}
	}
	back := newTok2Op(op.heads, op.n, op.bias, part)
	back.st = op.st
	return back
}

// tok2Bound holds the token-norm bound at weights of element type T; everything is
// accumulated in float64.
type tok2Bound[T kernel.Float] struct {
	wq, wv, wo, uq, vq, un, vn []T
	bias                       []T // (H, T) or nil
	d, hd, n                   int
	k                          []float64 // (H): k_h = 1 + 4 W_0(S_h / e)
	mass                       []float64 // (H): S_h
	qu, vo                     []float64 // (H, D): W^{Q,h} un_h and W^{V,h} (W^O vn)_h
	s                          []float64 // (H): s_h
	ov                         []float64 // (D): W^O vn
	q, sigma                   float64   // sqrt(sum_h k_h^2 s_h^2) and sigma_N
	bound                      float64
}

// tok2Factors evaluates the bound. sigma_N = un^T N vn is summed over the heads as
// (W^{Q,h} un_h)^T (W^{V,h} (W^O vn)_h) / sqrt(hd), un_h^T M_h (W^O vn)_h without M_h:
// three products of a (D, hd) block with a vector per head.
func tok2Factors[T kernel.Float](wq, wv, wo, uq, vq, un, vn, bias []T, d, heads, n int) tok2Bound[T] {
	hd := d / heads
	b := tok2Bound[T]{wq: wq, wv: wv, wo: wo, uq: uq, vq: vq, un: un, vn: vn, bias: bias, d: d, hd: hd, n: n,
		k: make([]float64, heads), mass: make([]float64, heads), qu: make([]float64, heads*d), vo: make([]float64, heads*d), s: make([]float64, heads)}
	row := make([]float64, n)
	for h := range heads {
		b.mass[h] = float64(n - 1)
		if bias != nil {
			for i, v := range bias[h*len(bias)/heads:][:n] {
				row[i] = float64(v)
			}
			b.mass[h] = lipschitz.BiasMass(row, n)
		}
		b.k[h] = 1 + 4*lipschitz.PhiInvOf(b.mass[h])
	}
	ov := make([]float64, d) // W^O vn
	kernel.MulVec64(ov, wo, d, vn)
	b.ov = ov
	// each head's products alone, on the cores; the sums across heads below stay in head
	// order, so that the bound does not depend on the number of goroutines
	kernel.ParallelFor(heads, 3*d*hd, func(_, h0, h1 int) {
		qv := make([]float64, d)
		for h := h0; h < h1; h++ {
			lo := h * hd
			kernel.MulVec64(b.qu[h*d:(h+1)*d], wq[lo:], d, un[lo:lo+hd])
			kernel.MulVec64(b.vo[h*d:(h+1)*d], wv[lo:], d, ov[lo:lo+hd])
			kernel.MulVec64(qv, wq[lo:], d, vq[h*hd:(h+1)*hd]) // (W^{Q,h} vq_h)_i
			for i, x := range qv {
				b.s[h] += float64(uq[h*d+i]) * x
			}
		}
	})
	inv := 1 / math.Sqrt(float64(hd))
	for h := range heads {
		sh := 0.0
		for i, x := range b.qu[h*d : (h+1)*d] {
			sh += x * b.vo[h*d+i]
		}
		b.sigma += sh * inv
		b.q += b.k[h] * b.k[h] * b.s[h] * b.s[h]
	}
	b.q = math.Sqrt(b.q)
	b.bound = b.q * b.sigma
	return b
}

// grad writes g times the gradient of the bound with respect to wq (0), wv (1), wo (2)
// (D, D) or the bias (3, (H, T)) into out. With c_N = q, omega = W^O vn and
// un_h = un[h*hd:(h+1)*hd], sigma_N has gradient un vn^T in N, so
// d/dM_h = c_N un_h omega_h^T, and:
//   - d/dW^{Q,h}[i, r] = sigma_N k_h^2 s_h / q uq_h[i] vq_h[r] + c_N un_h[r] (W^{V,h} omega_h)_i / sqrt(hd);
//   - d/dW^{V,h}[i, t] = c_N omega_h[t] (W^{Q,h} un_h)_i / sqrt(hd);
//   - d/dW^O[h*hd+t, e] = c_N (M_h^T un_h)[t] vn[e];
//   - d/db_h[delta] = sigma_N k_h s_h^2 / q * dk_h/dS_h * dS_h/db_h[delta], with
//     dk/dS = 4 W_0'(S/e) / e, W_0'(x) = W_0(x) / (x (1 + W_0(x))), and dS/db[delta] =
//     exp(b[delta] - b[0]) for 0 < delta < n, -S at delta = 0.
func (b tok2Bound[T]) grad(out []T, part int, g float64) {
	clear(out)
	d, hd := b.d, b.hd
	cN, inv := g*b.q, 1/math.Sqrt(float64(hd))
	if part == 3 {
		if b.q == 0 {
			return
		}
		t := len(b.bias) / len(b.s)
		for h := range b.s {
			w := lipschitz.PhiInvOf(b.mass[h])
			x := b.mass[h] / math.E
			dk := 4 / math.E // the limit of W_0'(x) at x = 0 is 1
			if x > 0 {
				dk = 4 * w / (x * (1 + w)) / math.E
			}
			c := g * b.sigma * b.k[h] * b.s[h] * b.s[h] / b.q * dk
			row := b.bias[h*t : (h+1)*t]
			for delta := 1; delta < b.n; delta++ {
				out[h*t+delta] = T(c * math.Exp(float64(row[delta])-float64(row[0])))
			}
			out[h*t] = T(-c * b.mass[h])
		}
		return
	}
	omega := b.ov // W^O vn
	for h := range b.s {
		lo := h * hd
		switch part {
		case 0:
			cs := 0.0
			if b.q > 0 {
				cs = g * b.k[h] * b.k[h] * b.sigma * b.s[h] / b.q
			}
			for i, vo := range b.vo[h*d : (h+1)*d] { // (W^{V,h} omega_h)_i
				row := out[i*d+lo : i*d+lo+hd]
				for r := range hd {
					row[r] = T(0 + cs*float64(b.uq[h*d+i])*float64(b.vq[h*hd+r]) + cN*float64(b.un[lo+r])*vo*inv)
				}
			}
		case 1:
			for i, qu := range b.qu[h*d : (h+1)*d] { // (W^{Q,h} un_h)_i
				row := out[i*d+lo : i*d+lo+hd]
				for t := range hd {
					row[t] = T(0 + cN*omega[lo+t]*qu*inv)
				}
			}
		case 2:
			for t := range hd {
				mu := 0.0 // (M_h^T un_h)[t] / sqrt(hd) = (W^{V,h})^T (W^{Q,h} un_h) / sqrt(hd)
				for i, qu := range b.qu[h*d : (h+1)*d] {
					mu += float64(b.wv[i*d+lo+t]) * qu
				}
				mu *= inv
				row := out[(lo+t)*d : (lo+t+1)*d]
				for e := range d {
					row[e] = T(0 + cN*mu*float64(b.vn[e]))
				}
			}
		}
	}
}
