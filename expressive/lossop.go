package expressive

import (
	"fmt"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/kernel"
	"lipformer/ops"
)

// gdLoss adds the loss of lossGraph to z's graph as one float64 op: from the logits z
// (L, L) to the scalar loss, for the target data in tg (set by lossTarget.set between
// runs). The forward pass computes the loss and its gradient dL/dz in the same parallel
// pass over the rows, and keeps the gradient; the backward op scales it by the output's
// gradient. Nothing of size (L, L) besides that gradient is materialised. // z: (L, L)
func gdLoss(z *G.Node, tg *lossTarget) (*G.Node, error) {
	if s := z.Shape(); s.Dims() != 2 || s[0] != tg.L || s[1] != tg.L || z.Dtype() != tensor.Float64 {
		return nil, fmt.Errorf("expressive: gd loss of %v %v logits, want float64 (%d, %d)", s, z.Dtype(), tg.L, tg.L)
	}
	return G.ApplyOp(&gdLossOp{ops.NewOpBase(fmt.Sprintf("GDLoss(L=%d, K=%d, a=%v, b=%v, target %p)", tg.L, tg.K, tg.a, tg.b, tg)), newLossState(tg)}, z)
}

// lossTarget is the target data of the gd loss as plain Go data: row i's support in
// slots s < n[i] of K, in increasing column order, with a = log(1 + eps) and b = log(1/eps).
type lossTarget struct {
	L, K int
	a, b float64
	n    []int     // (L,): |S_i|
	cols []int     // (L, K): column of slot s of row i; slots s >= n[i] are unused
	logA []float64 // (L, K): log A of the slot's entry
}

// newLossTarget allocates the data of targets of length L with at most K entries per row,
// at precision eps.
func newLossTarget(L, K int, eps float64) *lossTarget {
	return &lossTarget{L: L, K: K, a: math.Log1p(eps), b: -math.Log(eps),
		n: make([]int, L), cols: make([]int, L*K), logA: make([]float64, L*K)}
}

// set writes the support and values of t. t must have length L and 1 to K entries per row,
// in increasing column order (a valid Target); on an error nothing is written.
func (tg *lossTarget) set(t *Target) error {
	if t.L != tg.L || len(t.Rows) != tg.L {
		return fmt.Errorf("expressive: target has L = %d, the loss graph %d", t.L, tg.L)
	}
	for i, row := range t.Rows {
		if len(row) == 0 || len(row) > tg.K {
			return fmt.Errorf("expressive: target row %d has %d entries, the loss graph 1 to %d", i, len(row), tg.K)
		}
		for s, e := range row {
			if e.Col < 0 || e.Col >= tg.L || (s > 0 && e.Col <= row[s-1].Col) {
				return fmt.Errorf("expressive: target row %d: columns must increase within [0, %d)", i, tg.L)
			}
		}
	}
	for i, row := range t.Rows {
		tg.n[i] = len(row)
		for s, e := range row {
			tg.cols[i*tg.K+s], tg.logA[i*tg.K+s] = e.Col, math.Log(e.Val)
		}
	}
	return nil
}

// lossState is what the forward op of the loss leaves for its backward op: the gradient
// of the loss with respect to the logits at the last forward run, and the rows' losses.
type lossState struct {
	tg      *lossTarget
	dz      []float64 // (L, L)
	rowLoss []float64 // (L,)
}

func newLossState(tg *lossTarget) *lossState {
	return &lossState{tg: tg, dz: make([]float64, tg.L*tg.L), rowLoss: make([]float64, tg.L)}
}

// gdLossOp maps the logits z (L, L) to the loss (a scalar), keeping dL/dz in its state.
type gdLossOp struct {
	*ops.OpBase
	st *lossState
}

// Arity is 1: the logits.
func (op *gdLossOp) Arity() int { return 1 }

// Type maps a matrix to a scalar of its element type.
func (op *gdLossOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(G.TensorType{Dims: 2, Of: a}, a)
}

// InferShape is a scalar.
func (op *gdLossOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.ScalarShape(), nil }

// Do computes the loss, and dL/dz into the op's state. The rows are shared among
// goroutines; their losses are summed in row order, so the result does not depend on
// their number.
func (op *gdLossOp) Do(in ...G.Value) (G.Value, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("expressive: %v: %d inputs, want 1", op, len(in))
	}
	tg := op.st.tg
	d, ok := in[0].(*tensor.Dense)
	if !ok || d.Dtype() != tensor.Float64 || !d.Shape().Eq(tensor.Shape{tg.L, tg.L}) || !d.IsNativelyAccessible() {
		return nil, fmt.Errorf("expressive: %v: input is %T, want a float64 (%d, %d) tensor", op, in[0], tg.L, tg.L)
	}
	z := d.Float64s() // (L, L)
	kernel.ParallelFor(tg.L, tg.K*tg.L, func(_, lo, hi int) {
		scratch := make([]float64, 5*tg.K) // (5, K)
		for i := lo; i < hi; i++ {
			op.st.rowLoss[i] = tg.row(i, z[i*tg.L:(i+1)*tg.L], op.st.dz[i*tg.L:(i+1)*tg.L], scratch)
		}
	})
	var sum float64
	for _, v := range op.st.rowLoss {
		sum += v
	}
	return G.NewF64(sum / float64(tg.L)), nil
}

// row returns row i's share of the loss before the mean over rows,
//
//	sum_{s in S_i} r_is^2 + sum_{s in S_i} sum_{j not in S_i} softplus(x_isj),
//	r_is = (u_is - ubar_i) / a, x_isj = y_ij - c_is, y_ij = z_ij / a, c_is = (z_is - b) / a,
//
// and writes its gradient with respect to the row zi, divided by L, into gi. scratch holds
// 5K values. // zi, gi: (L,)
//
// Each leak term needs e^-|x_isj| (softplusSigmoid). Where y_ij is at most every c_is, all
// x_isj <= 0 and e^-|x_isj| = e^{y_ij - cmin} e^{cmin - c_is} with cmin = min_s c_is; where
// it is at least every c_is, e^-|x_isj| = e^{cmax - y_ij} e^{c_is - cmax}. The second
// factors are computed once per row and are at most 1, so one exponential per column j
// serves all its slots (to 2 ulp), except for the columns with y_ij between cmin and cmax.
func (tg *lossTarget) row(i int, zi, gi, scratch []float64) float64 {
	n, K := tg.n[i], tg.K
	cols, logA := tg.cols[i*K:i*K+n], tg.logA[i*K:i*K+n] // (n,)
	// (n,) each: r_is, c_is, sum_j sigmoid(x_isj), e^{cmin - c_is} and e^{c_is - cmax}.
	r, c, gs := scratch[:n], scratch[K:K+n], scratch[2*K:2*K+n]
	down, up := scratch[3*K:3*K+n], scratch[4*K:4*K+n]
	inva, binva, invL := 1/tg.a, tg.b/tg.a, 1/float64(tg.L)
	// Ratio errors: u_is = z_is - log A_is against their mean over the support.
	var ubar, ratio, rbar float64
	for s, col := range cols {
		ubar += zi[col] - logA[s]
	}
	ubar /= float64(n)
	cmin, cmax := math.Inf(1), math.Inf(-1)
	for s, col := range cols {
		r[s] = (zi[col] - logA[s] - ubar) * inva
		ratio += r[s] * r[s]
		rbar += r[s]
		c[s], gs[s] = zi[col]*inva-binva, 0
		cmin, cmax = min(cmin, c[s]), max(cmax, c[s])
	}
	rbar /= float64(n)
	for s, cs := range c {
		down[s], up[s] = math.Exp(cmin-cs), math.Exp(cs-cmax)
	}
	// Leak, over the runs of columns between consecutive support columns.
	var leak float64
	lo := 0
	for k := 0; k <= n; k++ {
		hi := tg.L
		if k < n {
			hi = cols[k]
		}
		for j := lo; j < hi; j++ {
			y := zi[j] * inva
			var g float64
			switch {
			case y <= cmin: // every x_isj <= 0: softplus = log1p(e), sigmoid = e / (1 + e)
				e0 := expNonPos(y - cmin)
				if e0 < tiny { // both are e to rounding
					for s, f := range down {
						e := e0 * f
						leak += e
						g += e
						gs[s] += e
					}
					break
				}
				for s, f := range down {
					e := e0 * f
					l, rcp := log1pRecip(e)
					sg := e * rcp
					leak += l
					g += sg
					gs[s] += sg
				}
			case y >= cmax: // every x_isj >= 0: softplus = x + log1p(e), sigmoid = 1 / (1 + e)
				e0 := expNonPos(cmax - y)
				if e0 < tiny { // log1p(e) = e and 1 / (1 + e) = 1 to rounding
					for s, f := range up {
						leak += y - c[s] + e0*f
						g++
						gs[s]++
					}
					break
				}
				for s, f := range up {
					l, sg := log1pRecip(e0 * f)
					leak += y - c[s] + l
					g += sg
					gs[s] += sg
				}
			default: // also NaN
				for s, cs := range c {
					sp, sg := softplusSigmoid(y - cs)
					leak += sp
					g += sg
					gs[s] += sg
				}
			}
			gi[j] = g * inva * invL
		}
		lo = hi + 1
	}
	// d/du_is of sum_t r_it^2 is 2 (r_is - rbar) / a; rbar is 0 up to rounding.
	for s, col := range cols {
		gi[col] = (2*(r[s]-rbar) - gs[s]) * inva * invL
	}
	return ratio + leak
}

// DiffWRT is true for the logits.
func (op *gdLossOp) DiffWRT(int) []bool { return []bool{true} }

// SymDiff returns the op gdLossGradOp(out, grad), which scales the kept dL/dz by grad.
// Taking the loss as an input orders it after the forward run.
func (op *gdLossOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(&gdLossGradOp{ops.NewOpBase("GDLossGrad" + op.String()[len("GDLoss"):]), op.st}, out, grad)
	return G.Nodes{d}, err
}

// gdLossGradOp maps (loss, dy) to dy * dL/dz, from the gradient its forward op kept.
type gdLossGradOp struct {
	*ops.OpBase
	st *lossState
}

// Arity is 2: the loss and its gradient.
func (op *gdLossGradOp) Arity() int { return 2 }

// Type maps two scalars to a matrix.
func (op *gdLossGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a, G.TensorType{Dims: 2, Of: a})
}

// InferShape is (L, L).
func (op *gdLossGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.st.tg.L, op.st.tg.L}, nil
}

// Do computes into a kept tensor.
func (op *gdLossGradOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

// UsePreallocDo computes into prealloc when it fits and shares no memory with an input.
func (op *gdLossGradOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("expressive: %v: %d inputs, want 2", op, len(in))
	}
	dy, ok := in[1].Data().(float64)
	if !ok {
		return nil, fmt.Errorf("expressive: %v: output gradient is %T, want a float64 scalar", op, in[1])
	}
	L := op.st.tg.L
	out := op.Output(prealloc, tensor.Float64, tensor.Shape{L, L}, in)
	dst := out.Float64s() // (L, L)
	kernel.ParallelFor(L, L, func(_, lo, hi int) {
		for k, v := range op.st.dz[lo*L : hi*L] {
			dst[lo*L+k] = dy * v
		}
	})
	return out, nil
}

// tiny is the e = e^-|x| below which log(1 + e) = e, e / (1 + e) = e and 1 / (1 + e) = 1
// to within half an ulp: the leak terms of most columns once the leak condition holds
// with a margin (|x| > 36.7).
const tiny = 0x1p-53

// softplusSigmoid returns softplus(x) = log(1 + e^x) and its derivative sigmoid(x) =
// 1 / (1 + e^-x) from one exponential e = e^-|x|, without overflow: softplus(x) =
// max(x, 0) + log(1 + e) and sigmoid(x) = 1 / (1 + e) for x >= 0, e / (1 + e) below.
func softplusSigmoid(x float64) (sp, sg float64) {
	e := expNonPos(-math.Abs(x))
	l, r := log1pRecip(e)
	if x >= 0 {
		return x + l, r
	}
	return l, e * r
}

// log1pRecip returns log(1 + e) and 1 / (1 + e) for 0 <= e <= 1: below 2^-10 (|x| > 6.9
// in softplusSigmoid, most terms of the loss) from their series, else from math.Log1p and
// a division.
func log1pRecip(e float64) (l, r float64) {
	if e < 0x1p-10 {
		return log1pSeries(e), recipSeries(e)
	}
	return math.Log1p(e), 1 / (1 + e)
}

// log1pSeries is log(1 + e) = e - e^2/2 + ... - e^6/6 for 0 <= e < 2^-10, truncated below
// e * 2^-60 / 7.
func log1pSeries(e float64) float64 {
	return e * (1 - e*(1.0/2-e*(1.0/3-e*(1.0/4-e*(1.0/5-e*(1.0/6))))))
}

// recipSeries is 1 / (1 + e) = 1 - e + ... - e^5 for 0 <= e < 2^-10, truncated below
// 2^-60.
func recipSeries(e float64) float64 {
	return 1 - e*(1-e*(1-e*(1-e*(1-e))))
}

// expNonPos is e^x for x <= 0 (and NaN for NaN), within 7e-16 relative of math.Exp and
// about 1.4 times faster: x = k log 2 + r with |r| <= log(2) / 2 (reduced as in math's exp), e^r from its
// Taylor series to degree 13 (truncated below 2^-57), evaluated by Estrin's scheme, times
// 2^k. Below -708, where 2^k would leave the normal range, it is math.Exp.
func expNonPos(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01 // the leading bits of log 2 (k * ln2Hi is exact)
		ln2Lo = 1.90821492927058770002e-10 // log 2 - ln2Hi
		log2e = 1.44269504088896338700e+00 // 1 / log 2
	)
	if !(x > -708) {
		return math.Exp(x)
	}
	k := int(log2e*x - 0.5) // round(x / log 2), as x < 0
	fk := float64(k)
	r := (x - fk*ln2Hi) - fk*ln2Lo
	r2 := r * r
	r4 := r2 * r2
	p := (1 + r + r2*(1.0/2+r*(1.0/6))) + r4*(1.0/24+r*(1.0/120)+r2*(1.0/720+r*(1.0/5040)))
	q := (1.0/40320 + r*(1.0/362880) + r2*(1.0/3628800+r*(1.0/39916800))) + r4*(1.0/479001600+r*(1.0/6227020800))
	return (p + r4*r4*q) * math.Float64frombits(uint64(k+1023)<<52)
}
