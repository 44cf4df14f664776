package ops

import (
	"math"

	"gonum.org/v1/gonum/blas/gonum"

	"lipformer/kernel"
)

// l2ProductBound holds the product bound of tied L2 attention at weights of element type T
// and where its maxima are attained; everything is accumulated in float64.
type l2ProductBound[T kernel.Float] struct {
	wq, wv, wo []T       // (D, D) each
	d, hd      int       // D and the head width
	k          float64   // 4 sqrt(hd) phiInv + 1
	m          []float64 // (H, hd, hd): M_h = W^{Q,h}^T W^{V,h} / sqrt(hd)
	a          []float64 // (H): ||W^{Q,h}^T||_inf
	aCol       []int     // (H): the column of W^Q attaining a_h
	col        []float64 // (D): N's column e* = argmax_e sum_h a_h sum_r |N_h[r, e]|
	e          int       // e*
	bound      float64
}

// l2ProductFactors evaluates the product bound for (D, D) weights.
func l2ProductFactors[T kernel.Float](wq, wv, wo []T, d, heads int, phiInv float64) l2ProductBound[T] {
	hd := d / heads
	b := l2ProductBound[T]{wq: wq, wv: wv, wo: wo, d: d, hd: hd, k: 4*math.Sqrt(float64(hd))*phiInv + 1,
		m: make([]float64, heads*hd*hd), a: make([]float64, heads), aCol: make([]int, heads)}
	inv := 1 / math.Sqrt(float64(hd))
	n := make([]float64, d*d) // (D, D): row h*hd+r is N_h's row r
	// N_h's rows gather c W^O's rows by gonum's axpy, which rounds each product and sum once
	// as a scalar loop does
	v64, wo64 := make([]float64, hd), make([]float64, d*d)
	for i, o := range wo {
		wo64[i] = float64(o)
	}
	axpy := gonum.Implementation{}.Daxpy
	for h := range heads {
		b.a[h], b.aCol[h] = maxColSum(wq, d, h*hd, (h+1)*hd)
		m := b.m[h*hd*hd : (h+1)*hd*hd]
		addHeadGram(m, v64, wq, wv, d, h*hd, hd)
		for r := range hd {
			row := n[(h*hd+r)*d : (h*hd+r+1)*d]
			for s := range hd {
				c := m[r*hd+s] * inv
				m[r*hd+s] = c
				axpy(d, c, wo64[(h*hd+s)*d:(h*hd+s+1)*d], 1, row, 1)
			}
		}
	}
	// sum_r |N_h[r, e]| for every head and column, each summed over r in order, a row at a time
	abs := make([]float64, heads*d) // (H, D)
	for h := range heads {
		sums := abs[h*d : (h+1)*d]
		for r := range hd {
			for e, x := range n[(h*hd+r)*d : (h*hd+r+1)*d] {
				sums[e] += math.Abs(x)
			}
		}
	}
	b.e, b.bound = 0, -1
	for e := range d {
		sum := 0.0
		for h := range heads {
			sum += b.a[h] * abs[h*d+e]
		}
		if sum > b.bound {
			b.e, b.bound = e, sum
		}
	}
	b.col = make([]float64, d)
	for i := range d {
		b.col[i] = n[i*d+b.e]
	}
	b.bound *= b.k
	return b
}

// value is the bound.
func (b l2ProductBound[T]) value() float64 { return b.bound }

// at is b reading wq, wv and wo.
func (b l2ProductBound[T]) at(wq, wv, wo []T) boundFactors[T] {
	b.wq, b.wv, b.wo = wq, wv, wo
	return b
}

// grad writes g times the subgradient of the bound with respect to wq (0), wv (1) or wo (2)
// into out (D, D). With sigma_{h,r} = a_h sign(N_h[r, e*]), w = W^{O,h}[:, e*] and
// S_h = sum_r |N_h[r, e*]|:
//   - d/dW^O[h*hd+s, e*] = k sum_r sigma_{h,r} M_h[r, s];
//   - d/dW^{Q,h}[i, r] = k sigma_{h,r} (W^{V,h} w)_i / sqrt(hd), plus k S_h sign(W^Q[i, j_h])
//     in the column j_h attaining a_h;
//   - d/dW^{V,h}[i, s] = k w_s (W^{Q,h} sigma_h)_i / sqrt(hd).
func (b l2ProductBound[T]) grad(out []T, part int, g float64) {
	clear(out)
	d, hd := b.d, b.hd
	c, inv := g*b.k, 1/math.Sqrt(float64(hd))
	sigma := make([]float64, hd)
	for h := range b.a {
		lo := h * hd
		for r := range hd {
			sigma[r] = b.a[h] * sign(b.col[lo+r])
		}
		switch part {
		case 0:
			s := 0.0
			for r := range hd {
				s += math.Abs(b.col[lo+r])
			}
			for i := range d {
				vw := 0.0
				for t, v := range b.wv[i*d+lo : i*d+lo+hd] {
					vw += float64(v) * float64(b.wo[(lo+t)*d+b.e])
				}
				row := out[i*d+lo : i*d+lo+hd]
				for r := range hd {
					x := 0 + c*sigma[r]*vw*inv
					if lo+r == b.aCol[h] {
						x += c * s * sign(b.wq[i*d+lo+r])
					}
					row[r] = T(x)
				}
			}
		case 1:
			for i := range d {
				qs := 0.0
				for r, q := range b.wq[i*d+lo : i*d+lo+hd] {
					qs += float64(q) * sigma[r]
				}
				row := out[i*d+lo : i*d+lo+hd]
				for t := range hd {
					row[t] = T(0 + c*float64(b.wo[(lo+t)*d+b.e])*qs*inv)
				}
			}
		case 2:
			m := b.m[h*hd*hd : (h+1)*hd*hd]
			for t := range hd {
				x := 0.0
				for r := range hd {
					x += sigma[r] * m[r*hd+t]
				}
				out[(lo+t)*d+b.e] = T(0 + c*x)
			}
		}
	}
}
