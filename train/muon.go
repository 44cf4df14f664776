package train

import (
	"math"

	"lipformer/kernel"
)

// Muon's constants (docs/math.md, "Muon"): the momentum, the number of Newton-Schulz
// steps and the quintic's coefficients a, b, c, chosen by Jordan et al. so that five steps
// take the singular values of a matrix of Frobenius norm 1 from 0.01 up into [0.68, 1.203]
// (smaller ones grow by at most a^5, about 485).
const (
	muonMomentum = 0.95
	muonNSSteps  = 5
	muonA        = 3.4445
	muonB        = -4.7750
	muonC        = 2.0315
)

// muonScratch holds one worker's matrices for orthogonalising an r x c momentum (r <= c):
// x and y (r, c), a and b (r, r).
type muonScratch[T Float] struct {
	x, y, a, b []T
}

// grow makes s hold an r x c problem, allocating only when it is larger than any before.
func (s *muonScratch[T]) grow(r, c int) {
	if cap(s.x) < r*c {
		s.x, s.y = make([]T, r*c), make([]T, r*c)
	}
	if cap(s.a) < r*r {
		s.a, s.b = make([]T, r*r), make([]T, r*r)
	}
	s.x, s.y, s.a, s.b = s.x[:r*c], s.y[:r*c], s.a[:r*r], s.b[:r*r]
}

// muonUpdate applies one Muon step with learning rate lr and decoupled weight decay wd to
// the matrix p (p.Rows, p.Cols), with its momentum m:
//
//	m <- mu m + g
//	u <- g + mu m                        (Nesterov)
//	O <- NS5(u / ||u||_F)                (about U V^T for u = U S V^T)
//	p <- (1 - lr wd) p - lr sqrt(max(1, cols/rows)) O
//
// in the precision T, on the calling goroutine, with s as scratch. A weight applied as x p
// has rows = fan-in and cols = fan-out: the scale is Jordan et al.'s sqrt(max(1,
// fan-out/fan-in)).
func muonUpdate[T Float](p Param[T], m []T, lr, wd float64, s *muonScratch[T]) {
	rows, cols := p.Rows, p.Cols
	tall := rows > cols // orthogonalise u^T (cols, rows), whose Gram matrix is the smaller
	r, c := rows, cols
	if tall {
		r, c = cols, rows
	}
	s.grow(r, c)
	mu := T(muonMomentum)
	var norm2 float64
	for i := range m {
		m[i] = mu*m[i] + p.Grad[i]
		u := p.Grad[i] + mu*m[i]
		norm2 += float64(u) * float64(u)
		if tall { // element (i/cols, i%cols) of u is element (i%cols, i/cols) of x
			s.x[(i%cols)*rows+i/cols] = u
		} else {
			s.x[i] = u
		}
	}
	kernel.Scale(s.x, s.x, T(1/(math.Sqrt(norm2)+1e-7)))
	newtonSchulz(s, r, c)
	step := lr * math.Sqrt(max(1, float64(cols)/float64(rows)))
	keep := T(1 - lr*wd)
	for i := range p.Value {
		o := s.x[i]
		if tall {
			o = s.x[(i%cols)*rows+i/cols]
		}
		p.Value[i] = keep*p.Value[i] - T(step)*o
	}
}

// newtonSchulz runs muonNSSteps steps of X <- a X + (b A + c A^2) X with A = X X^T on s.x
// (r, c), r <= c, leaving the result in s.x.
func newtonSchulz[T Float](s *muonScratch[T], r, c int) {
	for range muonNSSteps {
		kernel.GemmSerial(false, true, r, r, c, 1, s.x, c, s.x, c, 0, s.a, r)         // A = X X^T
		kernel.GemmSerial(false, false, r, r, r, T(muonC), s.a, r, s.a, r, 0, s.b, r) // B = c A^2
		for i := range s.b {                                                          // B += b A
			s.b[i] += T(muonB) * s.a[i]
		}
		copy(s.y, s.x)
		kernel.GemmSerial(false, false, r, c, r, 1, s.b, r, s.y, c, T(muonA), s.x, c) // X = a X + B X
	}
}
