package ops

import (
	"math"
	"runtime"
	"sync"

	"gorgonia.org/tensor"
)

// attnGeometry locates the blocks of one attention op's packed input.
type attnGeometry struct {
	spec             AttentionSpec
	batch            int     // B
	width            int     // D
	head             int     // d = D/H
	ld               int     // row stride of the packed input, k*D
	qOff, kOff, vOff int     // column offsets of the q, k and v blocks
	scale            float64 // 1/sqrt(d)
}

func newAttnGeometry(spec AttentionSpec, packed tensor.Shape) attnGeometry {
	k := spec.Kind.blocks()
	d := packed[1] / k
	g := attnGeometry{spec: spec, batch: packed[0] / spec.SeqLen, width: d, head: d / spec.Heads, ld: packed[1]}
	g.scale = 1 / math.Sqrt(float64(g.head))
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

// scratchLen is the work space of one job: P and dP (T, T), and two norms or sums (T).
func (g attnGeometry) scratchLen() int {
	t := g.spec.SeqLen
	return 2*t*t + 2*t
}

// runJobs runs f for every (sequence b, head h) on at most GOMAXPROCS goroutines, each
// with its own scratch slice kept in ws.
func runJobs[T Float](g attnGeometry, ws *workspace, f func(scratch []T, b, h int)) {
	jobs := g.batch * g.spec.Heads
	workers := min(runtime.GOMAXPROCS(0), jobs)
	bufs := scratch[T](ws, workers, g.scratchLen())
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for j := w; j < jobs; j += workers {
				f(bufs[w], j/g.spec.Heads, j%g.spec.Heads)
			}
		}(w)
	}
	wg.Wait()
}

// attnProbs writes P (T, T) of sequence b, head h into p; nq and nk (T) receive the squared
// norms of the queries and keys for L2 logits.
func attnProbs[T Float](g attnGeometry, p, nq, nk, packed []T, b, h int) {
	t, d := g.spec.SeqLen, g.head
	base := b*t*g.ld + h*d
	q, k := packed[base+g.qOff:], packed[base+g.kOff:]
	if g.spec.Kind == DotProduct {
		gemmSerial(false, true, t, t, d, T(g.scale), q, g.ld, k, g.ld, 0, p, t)
	} else {
		gemmSerial(false, true, t, t, d, T(2*g.scale), q, g.ld, k, g.ld, 0, p, t)
		sqNorms(nq, q, g.ld, d)
		sqNorms(nk, k, g.ld, d)
		for i := 0; i < t; i++ {
			row := p[i*t : (i+1)*t]
			for j := range row {
				row[j] -= T(g.scale) * (nq[i] + nk[j])
			}
		}
	}
	for i := 0; i < t; i++ {
		keep := t
		if g.spec.Causal {
			keep = i + 1
		}
		softmaxRow(p[i*t:(i+1)*t], p[i*t:(i+1)*t], keep)
	}
}

// sqNorms writes the squared norms of the len(n) rows (stride ld, width d) of x into n.
func sqNorms[T Float](n, x []T, ld, d int) {
	for i := range n {
		var s T
		for _, v := range x[i*ld : i*ld+d] {
			s += v * v
		}
		n[i] = s
	}
}

// attnForward computes head h of sequence b: out[b, :, h] = P v_h.
func attnForward[T Float](g attnGeometry, s, packed, out []T, b, h int) {
	t, d := g.spec.SeqLen, g.head
	p, nq, nk := s[:t*t], s[2*t*t:2*t*t+t], s[2*t*t+t:2*t*t+2*t]
	attnProbs(g, p, nq, nk, packed, b, h)
	v := packed[b*t*g.ld+h*d+g.vOff:]
	gemmSerial(false, false, t, d, t, 1, p, t, v, g.ld, 0, out[b*t*g.width+h*d:], g.width)
}

// attnBackward writes the gradients of q, k and v of sequence b, head h into dp, from the
// output gradient dout. With dS = P * (dP - rowdot(dP, P)) the gradient of the logits:
// dot product: dq = s dS k, dk = s dS^T q; L2: dq_i = 2s (sum_j dS_ij (k_j - q_i)) and
// dk_j = 2s (sum_i dS_ij (q_i - k_j)), added together when keys are queries.
func attnBackward[T Float](g attnGeometry, s, packed, dout, dp []T, b, h int) {
	t, d := g.spec.SeqLen, g.head
	p, ds, r, c := s[:t*t], s[t*t:2*t*t], s[2*t*t:2*t*t+t], s[2*t*t+t:2*t*t+2*t]
	attnProbs(g, p, r, c, packed, b, h)
	base := b*t*g.ld + h*d
	q, k, v := packed[base+g.qOff:], packed[base+g.kOff:], packed[base+g.vOff:]
	dq, dk, dv := dp[base+g.qOff:], dp[base+g.kOff:], dp[base+g.vOff:]
	do := dout[b*t*g.width+h*d:]
	gemmSerial(false, true, t, t, d, 1, do, g.width, v, g.ld, 0, ds, t) // dP = dO v^T
	gemmSerial(true, false, t, d, t, 1, p, t, do, g.width, 0, dv, g.ld) // dv = P^T dO
	for i := 0; i < t; i++ {
		pr, dr := p[i*t:(i+1)*t], ds[i*t:(i+1)*t]
		var dot T
		for j, pv := range pr {
			dot += pv * dr[j]
		}
		for j, pv := range pr {
			dr[j] = pv * (dr[j] - dot)
		}
	}
	sc := T(g.scale)
	switch g.spec.Kind {
	case DotProduct:
		gemmSerial(false, false, t, d, t, sc, ds, t, k, g.ld, 0, dq, g.ld)
		gemmSerial(true, false, t, d, t, sc, ds, t, q, g.ld, 0, dk, g.ld)
	case L2Untied:
		rowColSums(r, c, ds, t)
		gemmSerial(false, false, t, d, t, 2*sc, ds, t, k, g.ld, 0, dq, g.ld)
		gemmSerial(true, false, t, d, t, 2*sc, ds, t, q, g.ld, 0, dk, g.ld)
		subScaledRows(dq, q, r, g.ld, d, 2*sc)
		subScaledRows(dk, k, c, g.ld, d, 2*sc)
	case L2:
		rowColSums(r, c, ds, t)
		for i := range r {
			r[i] += c[i]
		}
		gemmSerial(false, false, t, d, t, 2*sc, ds, t, q, g.ld, 0, dq, g.ld)
		gemmSerial(true, false, t, d, t, 2*sc, ds, t, q, g.ld, 1, dq, g.ld)
		subScaledRows(dq, q, r, g.ld, d, 2*sc)
	}
}

// rowColSums writes the row sums and the column sums of the (t, t) matrix m.
func rowColSums[T Float](r, c, m []T, t int) {
	clear(c)
	for i := 0; i < t; i++ {
		var s T
		for j, v := range m[i*t : (i+1)*t] {
			s += v
			c[j] += v
		}
		r[i] = s
	}
}

// subScaledRows does y_i -= a * w_i * x_i for the len(w) rows (stride ld, width d).
func subScaledRows[T Float](y, x, w []T, ld, d int, a T) {
	for i, wi := range w {
		f := a * wi
		yr, xr := y[i*ld:i*ld+d], x[i*ld:i*ld+d]
		for j, v := range xr {
			yr[j] -= f * v
		}
	}
}
