package expressive

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// gramBlock is the number of columns of G added per rank-k update.
const gramBlock = 256

// Gram computes G G^T for the matrices G = JLMatrix(L, d, seed) of one seed, for any
// sequence of widths d, without materialising G. Since those G are nested (column c is
// z_c / sqrt(d) with z_c fixed by the seed), G G^T = S(d) / d with S(d) = sum_{c<d} z_c z_c^T,
// and S(d) is obtained from a kept S(d') with d' <= d by adding d - d' rank-one terms
// (in blocks, through BLAS Syrk). It keeps only the S it started from and the S just
// computed: exactly what doubling followed by bisection needs, so that a whole search
// costs about twice the largest d in rank-one updates, not the sum of all d tried.
type Gram struct {
	L     int
	seed  uint64
	snaps []gramSnap
}

// gramSnap is S(d). // s: (L, L), upper triangle
type gramSnap struct {
	d int
	s *mat.SymDense
}

// NewGram returns the Gram computer for L rows and the given seed.
func NewGram(L int, seed uint64) (*Gram, error) {
	if L < 1 {
		return nil, fmt.Errorf("expressive: Gram needs L >= 1, got %d", L)
	}
	return &Gram{L: L, seed: seed}, nil
}

// At returns G G^T for G = JLMatrix(g.L, d, seed) as a full dense matrix. // (L, L)
func (g *Gram) At(d int) (*mat.Dense, error) {
	if d < 1 {
		return nil, fmt.Errorf("expressive: head width d = %d, want >= 1", d)
	}
	base := gramSnap{s: mat.NewSymDense(g.L, nil)}
	for _, sn := range g.snaps {
		if sn.d <= d && sn.d >= base.d {
			base = sn
		}
	}
	s := mat.NewSymDense(g.L, nil)
	s.CopySym(base.s)
	for c := base.d; c < d; c += gramBlock {
		blk := g.columns(c, min(c+gramBlock, d))
		s.SymRankK(s, 1, blk)
	}
	g.snaps = g.snaps[:0]
	if base.d > 0 && base.d < d {
		g.snaps = append(g.snaps, base)
	}
	g.snaps = append(g.snaps, gramSnap{d: d, s: s})
	out := mat.NewDense(g.L, g.L, nil)
	inv := 1 / float64(d)
	for i := range g.L {
		for j := i; j < g.L; j++ {
			v := s.At(i, j) * inv
			out.Set(i, j, v)
			out.Set(j, i, v)
		}
	}
	return out, nil
}

// columns returns the unscaled columns z_from, ..., z_{to-1} of G. // (L, to-from)
func (g *Gram) columns(from, to int) *mat.Dense {
	blk := mat.NewDense(g.L, to-from, nil)
	for c := from; c < to; c++ {
		rng := streamRNG(g.seed, tagG, uint64(g.L), uint64(c))
		for i := range g.L {
			blk.Set(i, c-from, rng.NormFloat64())
		}
	}
	return blk
}
