package ops

import (
	"math"
	"runtime"

	"gorgonia.org/tensor"

	"lipformer/kernel"
)

// AttentionBlock is the number of rows (and columns) of a block of causal attention. The
// blocks of P above its block diagonal are masked, exactly 0: the kernels neither compute
// nor read them, which saves about half the products at T >> AttentionBlock and changes
// nothing but the order in which zeros would have been added.
const AttentionBlock = 64

// attnBlock is AttentionBlock within the package.
const attnBlock = AttentionBlock

// attnGeometry locates the blocks of one attention op's packed input.
type attnGeometry struct {
	spec             AttentionSpec
	batch            int     // B
	width            int     // D
	head             int     // d = D/H
	ld               int     // row stride of the packed input, k*D
	qOff, kOff, vOff int     // column offsets of the q, k and v blocks
	scale            float64 // 1/sqrt(d)
	block            int     // rows of a block of P: attnBlock when causal, else T (one block)
}

func newAttnGeometry(spec AttentionSpec, packed tensor.Shape) attnGeometry {
	k := spec.Kind.blocks()
	d := packed[1] / k
	g := attnGeometry{spec: spec, batch: packed[0] / spec.SeqLen, width: d, head: d / spec.Heads, ld: packed[1], block: spec.SeqLen}
	g.scale = 1 / math.Sqrt(float64(g.head))
	if spec.Causal {
		g.block = min(spec.SeqLen, attnBlock)
	}
	switch spec.Kind {
	case L2:
		g.qOff, g.kOff, g.vOff = 0, 0, d
	default:
		g.qOff, g.kOff, g.vOff = 0, d, 2*d
	}
	return g
}

// rows is B*T.
func (g attnGeometry) rows() int { return g.batch * g.spec.SeqLen }

// blocks is the number of row (or column) blocks of P.
func (g attnGeometry) blocks() int { return (g.spec.SeqLen + g.block - 1) / g.block }

// blockRows is the rows [lo, hi) of block i.
func (g attnGeometry) blockRows(i int) (lo, hi int) {
	lo = i * g.block
	return lo, min(g.spec.SeqLen, lo+g.block)
}

// seen is the number of leading columns of P computed in the rows of block i: T, or
// causally the end of the block.
func (g attnGeometry) seen(i int) int {
	if !g.spec.Causal {
		return g.spec.SeqLen
	}
	_, hi := g.blockRows(i)
	return hi
}

// seenFrom is the first row of P computed in the columns of block j: 0, or causally the
// start of the block.
func (g attnGeometry) seenFrom(j int) int {
	if !g.spec.Causal {
		return 0
	}
	lo, _ := g.blockRows(j)
	return lo
}

// keep is the number of leading entries of row i of P that are not masked.
func (g attnGeometry) keep(i int) int {
	if g.spec.Causal {
		return i + 1
	}
	return g.spec.SeqLen
}

// probsLen is the size of P for every job, (B*H, T, T).
func (g attnGeometry) probsLen() int {
	t := g.spec.SeqLen
	return g.batch * g.spec.Heads * t * t
}

// scratchLen is the work space of one job: P and dP (T, T), and two norms or sums (T).
func (g attnGeometry) scratchLen() int {
	t := g.spec.SeqLen
	return 2*t*t + 2*t
}

// attnScratch splits a job's work space into P and dS (T, T) and two vectors (T).
func attnScratch[T kernel.Float](g attnGeometry, s []T) (p, ds, r, c []T) {
	t := g.spec.SeqLen
	return s[:t*t], s[t*t : 2*t*t], s[2*t*t : 2*t*t+t], s[2*t*t+t : 2*t*t+2*t]
}

// jobProbs is P (T, T) of sequence b, head h within P of every job (B*H, T, T).
func jobProbs[T kernel.Float](g attnGeometry, probs []T, b, h int) []T {
	t := g.spec.SeqLen
	j := b*g.spec.Heads + h
	return probs[j*t*t : (j+1)*t*t]
}

// runJobs runs f for every (sequence b, head h) on at most GOMAXPROCS goroutines, the
// calling one included, each with its own scratch slice kept in ws (kernel.ParallelJobs:
// the workers take the next job as they become free); a job's result does not depend on
// the worker.
func runJobs[T kernel.Float](g attnGeometry, ws *kernel.Workspace, f func(scratch []T, b, h int)) {
	jobs := g.batch * g.spec.Heads
	workers := min(runtime.GOMAXPROCS(0), jobs)
	bufs := kernel.Scratch[T](ws, workers, g.scratchLen())
	kernel.ParallelJobs(jobs, workers, func(w, j int) { f(bufs[w], j/g.spec.Heads, j%g.spec.Heads) })
}

// attnProbs writes P (T, T) of sequence b, head h into p, its computed blocks only; nq and
// nk (T) receive the squared norms of the queries and keys for L2 logits. bias, when not
// nil, is (H, BiasLen): bias[h*BiasLen+i-j] is added to the logit of row i, column j <= i.
func attnProbs[T kernel.Float](g attnGeometry, p, nq, nk, packed, bias []T, b, h int) {
	t, d := g.spec.SeqLen, g.head
	base := b*t*g.ld + h*d
	q, k := packed[base+g.qOff:], packed[base+g.kOff:]
	alpha := T(g.scale)
	if g.spec.Kind != DotProduct {
		alpha = T(2 * g.scale)
		kernel.SquaredNorms(nq, q, g.ld, d)
		kernel.SquaredNorms(nk, k, g.ld, d)
	}
	for bi := range g.blocks() {
		lo, hi := g.blockRows(bi)
		n := g.seen(bi)
		kernel.GemmSerial(false, true, hi-lo, n, d, alpha, q[lo*g.ld:], g.ld, k, g.ld, 0, p[lo*t:], t) // (hi-lo, n)
		for i := lo; i < hi; i++ {
			row, keep := p[i*t:i*t+n], g.keep(i)
			addLogitTerms(row[:keep], nq, nk, bias, g, h, i)
			kernel.SoftmaxRow(row, row, keep)
		}
	}
}

// addLogitTerms adds to the logits row i of head h (its first len(row) entries) what the
// product q k^T leaves out: for L2, -scale (|q_i|^2 + |k_j|^2) (nq, nk the squared
// norms); with a bias (not nil), bias[h, i-j], after the L2 terms. One pass over the row.
func addLogitTerms[T kernel.Float](row, nq, nk, bias []T, g attnGeometry, h, i int) {
	l2, s := g.spec.Kind != DotProduct, T(g.scale)
	var bh []T
	if bias != nil {
		bh = bias[h*g.spec.BiasLen:][:i+1]
	}
	switch {
	case l2 && bh != nil:
		ni := nq[i]
		for j, x := range row {
			x -= s * (ni + nk[j])
			row[j] = x + bh[i-j]
		}
	case l2:
		ni := nq[i]
		for j, x := range row {
			row[j] = x - s*(ni+nk[j])
		}
	case bh != nil:
		for j, x := range row {
			row[j] = x + bh[i-j]
		}
	}
}

// attnForward computes head h of sequence b, out[b, :, h] = P v_h, writing P into p
// (T, T); nq and nk (T) are work space; bias as for attnProbs.
func attnForward[T kernel.Float](g attnGeometry, p, nq, nk, packed, bias, out []T, b, h int) {
	t, d := g.spec.SeqLen, g.head
	attnProbs(g, p, nq, nk, packed, bias, b, h)
	v := packed[b*t*g.ld+h*d+g.vOff:]
	o := out[b*t*g.width+h*d:]
	for bi := range g.blocks() {
		lo, hi := g.blockRows(bi)
		kernel.GemmSerial(false, false, hi-lo, d, g.seen(bi), 1, p[lo*t:], t, v, g.ld, 0, o[lo*g.width:], g.width)
	}
}

// attnBackward writes the gradients of q, k and v of sequence b, head h into dp, from the
// output gradient dout and P (T, T) of the job; ds (T, T), r and c (T) are work space.
// With dS = P * (dP - rowdot(dP, P)) the gradient of the logits:
// dot product: dq = s dS k, dk = s dS^T q; L2: dq_i = 2s (sum_j dS_ij (k_j - q_i)) and
// dk_j = 2s (sum_i dS_ij (q_i - k_j)), added together when keys are queries. Products
// by dS or P go by row blocks (dq) or column blocks (dk, dv) over their computed part.
// dbias, when not nil (T), receives sum_i dS[i, i-delta] at delta: the gradient of a
// position bias.
func attnBackward[T kernel.Float](g attnGeometry, p, ds, r, c, packed, dout, dp []T, dbias []float64, b, h int) {
	t, d := g.spec.SeqLen, g.head
	base := b*t*g.ld + h*d
	q, k, v := packed[base+g.qOff:], packed[base+g.kOff:], packed[base+g.vOff:]
	dq, dk, dv := dp[base+g.qOff:], dp[base+g.kOff:], dp[base+g.vOff:]
	do := dout[b*t*g.width+h*d:]
	for bi := range g.blocks() {
		lo, hi := g.blockRows(bi)
		n := g.seen(bi)
		kernel.GemmSerial(false, true, hi-lo, n, d, 1, do[lo*g.width:], g.width, v, g.ld, 0, ds[lo*t:], t) // dP = dO v^T
		kernel.PairDots(r[lo:hi], p[lo*t:], ds[lo*t:], t, n)
		for i := lo; i < hi; i++ {
			pr, dr, dot := p[i*t:i*t+n], ds[i*t:i*t+n], r[i]
			for j, pv := range pr {
				dr[j] = pv * (dr[j] - dot)
			}
			if dbias != nil {
				for j := range dr[:g.keep(i)] {
					dbias[i-j] += float64(dr[j])
				}
			}
		}
	}
	sc := T(g.scale)
	rowsBy := func(alpha T, x []T) { // dq = alpha dS x, by row blocks
		for bi := range g.blocks() {
			lo, hi := g.blockRows(bi)
			kernel.GemmSerial(false, false, hi-lo, d, g.seen(bi), alpha, ds[lo*t:], t, x, g.ld, 0, dq[lo*g.ld:], g.ld)
		}
	}
	colsBy := func(m []T, alpha T, x []T, ldx int, beta T, y []T) { // y = alpha m^T x + beta y, by column blocks
		for bj := range g.blocks() {
			lo, hi := g.blockRows(bj)
			from := g.seenFrom(bj)
			kernel.GemmSerial(true, false, hi-lo, d, t-from, alpha, m[from*t+lo:], t, x[from*ldx:], ldx, beta, y[lo*g.ld:], g.ld)
		}
	}
	colsBy(p, 1, do, g.width, 0, dv) // dv = P^T dO
	switch g.spec.Kind {
	case DotProduct:
		rowsBy(sc, k)
		colsBy(ds, sc, q, g.ld, 0, dk)
	case L2Untied:
		rowColSums(g, r, c, ds)
		rowsBy(2*sc, k)
		colsBy(ds, 2*sc, q, g.ld, 0, dk)
		subScaledRows(dq, q, r, g.ld, d, 2*sc)
		subScaledRows(dk, k, c, g.ld, d, 2*sc)
	case L2:
		rowColSums(g, r, c, ds)
		for i := range r {
			r[i] += c[i]
		}
		rowsBy(2*sc, q)
		colsBy(ds, 2*sc, q, g.ld, 1, dq)
		subScaledRows(dq, q, r, g.ld, d, 2*sc)
	}
}

// rowColSums writes the row sums and the column sums of the computed blocks of m (T, T).
// Every sum is taken in order (rows left to right, columns top to bottom); two rows run
// side by side so that the row sums do not wait on each other.
func rowColSums[T kernel.Float](g attnGeometry, r, c, m []T) {
	t := g.spec.SeqLen
	clear(c)
	for bi := range g.blocks() {
		lo, hi := g.blockRows(bi)
		n := g.seen(bi)
		i := lo
		for ; i+2 <= hi; i += 2 {
			m0, m1 := m[i*t:][:n], m[(i+1)*t:][:n]
			var s0, s1 T
			for j, v := range m0 {
				w := m1[j]
				s0 += v
				s1 += w
				c[j] += v
				c[j] += w
			}
			r[i], r[i+1] = s0, s1
		}
		for ; i < hi; i++ {
			var s T
			for j, v := range m[i*t : i*t+n] {
				s += v
				c[j] += v
			}
			r[i] = s
		}
	}
}

// subScaledRows does y_i -= a * w_i * x_i for the len(w) rows (stride ld, width d).
func subScaledRows[T kernel.Float](y, x, w []T, ld, d int, a T) {
	for i, wi := range w {
		f := a * wi
		kernel.SubScaled(y[i*ld:i*ld+d], x[i*ld:i*ld+d], f)
	}
}
