package ngram

import (
	"fmt"
	"math"

	"lipformer/kernel"
)

// ballFit is a set of logit vectors, one to a row of counts, that lie within a distance
// rho of one centre: z_h = c + v_h with ||v_h||_2 <= rho (docs/math.md, "What a logit
// ball allows").
type ballFit struct {
	center  []float64   // c (V)
	offsets [][]float64 // v_h (H, V), each of norm at most rho
	loss    float64     // mean cross-entropy of the rows' counts in nats
	iters   int         // projected-gradient steps taken
}

// Solver settings: a fit stops when a projected-gradient step moves the point by less
// than its tolerance in the solver's metric, or after ballMaxIter steps. At ballTol the
// loss is within 1e-5 bits of the minimum (TestFitBallTolerance).
const (
	ballTol     = 1e-6
	ballMaxIter = 20000
	ballBlock   = 64 // rows to a block of the parallel gradient
)

// fitBall returns the logit vectors z_h = c + v_h, ||v_h||_2 <= rho, that minimise the
// mean cross-entropy of the counts, one row of V counts for each h:
//
//	sum_h [N_h LSE(z_h) - n_h . z_h] / N,  N_h = sum_j n_hj,  N = sum_h N_h.
//
// The problem is convex in (c, v) (LSE is convex, the constraint a product of balls), so
// the minimum found is the minimum. It is solved by accelerated projected gradient (FISTA
// with gradient restart) in the metric diag(1, w_h), w_h = N_h / N: there the objective's
// gradient is 1-Lipschitz, because the Hessian of LSE has eigenvalues at most 1/2 and
// (dc + dv_h)^2 <= 2 (dc^2 + dv_h^2), so the step is 1. Blocks of rows run on the
// cores, their sums added in block order, so the fit is the same on any number of cores.
// It stops when a step moves the point by less than tol in that metric. Rows with no
// counts are left at c. The rows are divided by their sums in place.
func fitBall(rows [][]float64, rho, tol float64) (*ballFit, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("ngram: a logit ball fit needs at least one row of counts")
	}
	if !(rho >= 0) || math.IsInf(rho, 0) {
		return nil, fmt.Errorf("ngram: logit ball radius %g, want finite and >= 0", rho)
	}
	v := len(rows[0])
	w := make([]float64, len(rows)) // w_h = N_h / N
	p := rows                       // n_h / N_h (H, V), once divided below
	var total float64
	for h, r := range rows {
		if len(r) != v {
			return nil, fmt.Errorf("ngram: logit ball fit: row %d has %d counts, row 0 has %d", h, len(r), v)
		}
		for j, n := range r {
			if !(n >= 0) || math.IsInf(n, 0) {
				return nil, fmt.Errorf("ngram: logit ball fit: count %g at row %d, column %d, want finite and >= 0", n, h, j)
			}
			w[h] += n
		}
		total += w[h]
	}
	if !(total > 0) {
		return nil, fmt.Errorf("ngram: a logit ball fit needs counts, got none")
	}
	for h, r := range rows {
		if w[h] > 0 {
			for j := range r {
				r[j] /= w[h]
			}
		}
		w[h] /= total
	}
	x := newBallPoint(len(rows), v)    // the iterate
	prev := newBallPoint(len(rows), v) // the one before
	y := newBallPoint(len(rows), v)    // the extrapolated point the gradient is taken at
	blocks := (len(rows) + ballBlock - 1) / ballBlock
	gradC := make([]float64, blocks*v) // each block's part of the gradient over c
	step2s, restarts := make([]float64, blocks), make([]float64, blocks)
	t := 1.0
	fit := &ballFit{}
	for fit.iters = 1; fit.iters <= ballMaxIter; fit.iters++ {
		prev, x = x, prev
		// Each block of rows, on the cores: the gradient over v_h divided by w_h,
		// softmax(c + v_h) - p_h, its w_h-weighted part of the gradient over c, and the
		// projected step of v_h with its parts of the step's norm and of the restart test.
		// The parts are summed in block order, so the fit does not depend on the cores.
		kernel.ParallelFor(blocks, ballBlock*v*8, func(_, lo, hi int) {
			g := make([]float64, v)
			for b := lo; b < hi; b++ {
				gc := gradC[b*v : (b+1)*v]
				clear(gc)
				step2s[b], restarts[b] = 0, 0
				for h := b * ballBlock; h < min(len(rows), (b+1)*ballBlock); h++ {
					if w[h] == 0 {
						copy(x.v[h], y.v[h])
						continue
					}
					softmaxShifted(y.c, y.v[h], g)
					for j := range g {
						g[j] -= p[h][j]
						gc[j] += w[h] * g[j]
						x.v[h][j] = y.v[h][j] - g[j]
					}
					projectBall(x.v[h], rho)
					for j := range g {
						d := x.v[h][j] - y.v[h][j]
						step2s[b] += w[h] * d * d
						restarts[b] -= w[h] * d * (x.v[h][j] - prev.v[h][j])
					}
				}
			}
		})
		var step2, restart float64
		for j := range v {
			var gj float64
			for b := range blocks {
				gj += gradC[b*v+j]
			}
			x.c[j] = y.c[j] - gj
			d := x.c[j] - y.c[j]
			step2 += d * d
			restart -= d * (x.c[j] - prev.c[j])
		}
		for b := range blocks {
			step2 += step2s[b]
			restart += restarts[b]
		}
		if math.Sqrt(step2) < tol {
			break
		}
		if restart > 0 { // the momentum points uphill: drop it (O'Donoghue and Candes 2015)
			t = 1
		}
		tNext := (1 + math.Sqrt(1+4*t*t)) / 2
		beta := (t - 1) / tNext
		t = tNext
		y.extrapolate(x, prev, beta)
	}
	fit.iters = min(fit.iters, ballMaxIter)
	fit.center, fit.offsets = x.c, x.v
	s := make([]float64, v)
	for h := range rows {
		if w[h] > 0 {
			fit.loss += w[h] * crossEntropy(x.c, x.v[h], p[h], s)
		}
	}
	return fit, nil
}

// logits writes z_h = c + v_h into z (V).
func (f *ballFit) logits(h int, z []float64) {
	for j := range z {
		z[j] = f.center[j] + f.offsets[h][j]
	}
}

// ballPoint is a point (c, v_1, ..., v_H) of the fit's variables.
type ballPoint struct {
	c []float64   // (V)
	v [][]float64 // (H, V)
}

func newBallPoint(rows, vocab int) *ballPoint {
	p := &ballPoint{c: make([]float64, vocab), v: make([][]float64, rows)}
	flat := make([]float64, rows*vocab)
	for h := range p.v {
		p.v[h] = flat[h*vocab : (h+1)*vocab : (h+1)*vocab]
	}
	return p
}

// extrapolate sets p to x + beta (x - prev), the rows on the cores.
func (p *ballPoint) extrapolate(x, prev *ballPoint, beta float64) {
	for j := range p.c {
		p.c[j] = x.c[j] + beta*(x.c[j]-prev.c[j])
	}
	kernel.ParallelFor(len(p.v), len(p.c)*2, func(_, lo, hi int) {
		for h := lo; h < hi; h++ {
			for j := range p.v[h] {
				p.v[h][j] = x.v[h][j] + beta*(x.v[h][j]-prev.v[h][j])
			}
		}
	})
}

// projectBall scales v onto the ball of radius rho when it lies outside it.
func projectBall(v []float64, rho float64) {
	var n2 float64
	for _, a := range v {
		n2 += a * a
	}
	if n := math.Sqrt(n2); n > rho {
		k := rho / n
		for j := range v {
			v[j] *= k
		}
	}
}

// softmaxShifted writes softmax(c + v) into s.
func softmaxShifted(c, v, s []float64) {
	for j := range s {
		s[j] = c[j] + v[j]
	}
	kernel.SoftmaxRow(s, s, len(s))
}

// logSumExp returns LSE(z) = log sum_j exp z_j.
func logSumExp(z []float64) float64 {
	m := math.Inf(-1)
	for _, a := range z {
		m = max(m, a)
	}
	var sum float64
	for _, a := range z {
		sum += math.Exp(a - m)
	}
	return m + math.Log(sum)
}

// crossEntropy returns LSE(c + v) - p . (c + v), the mean cross-entropy in nats of the
// distribution p under the logits c + v; z is scratch of length V.
func crossEntropy(c, v, p, z []float64) float64 {
	var dot float64
	for j := range z {
		z[j] = c[j] + v[j]
		dot += p[j] * z[j]
	}
	return logSumExp(z) - dot
}
