package ref

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// headWeights names one per-head weight set (W^Q, W^K or W^V) for validation.
type headWeights struct {
	name string
	w    []*mat.Dense
}

// checkMHA validates a multihead attention call: x is (N, D), every set in
// sets holds H matrices of shape (D, d) with H = len(sets[0].w) and d = D/H,
// and wo is (D, D). It returns N, D, H and d.
func checkMHA(x [][]float64, wo *mat.Dense, sets ...headWeights) (n, dim, heads, d int, err error) {
	n, dim, err = dims("x", x)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	heads = len(sets[0].w)
	if heads == 0 {
		return 0, 0, 0, 0, fmt.Errorf("ref: %s has no heads", sets[0].name)
	}
	if dim%heads != 0 {
		return 0, 0, 0, 0, fmt.Errorf("ref: D = %d is not divisible by H = %d heads", dim, heads)
	}
	d = dim / heads
	for _, s := range sets {
		if len(s.w) != heads {
			return 0, 0, 0, 0, fmt.Errorf("ref: %s has %d heads, want H = %d", s.name, len(s.w), heads)
		}
		for h, w := range s.w {
			if err := checkWeight(s.name, h, w, dim, d); err != nil {
				return 0, 0, 0, 0, err
			}
		}
	}
	if err := checkWeight("wo (D x D)", -1, wo, dim, dim); err != nil {
		return 0, 0, 0, 0, err
	}
	return n, dim, heads, d, nil
}

// matmul returns the (r, c) product of an (r, m) and an (m, c) sequence.
func matmul(a, b [][]float64) [][]float64 {
	out := zeros(len(a), len(b[0]))
	for i := range a {
		for k := range b[0] {
			s := 0.0
			for l := range b {
				s += a[i][l] * b[l][k]
			}
			out[i][k] = s
		}
	}
	return out
}

// concatProject writes each (N, d) head into columns h*d..(h+1)*d of an
// (N, D) matrix and returns that matrix times wo (D, D).
func concatProject(heads [][][]float64, wo *mat.Dense) [][]float64 {
	n, d := len(heads[0]), len(heads[0][0])
	concat := zeros(n, d*len(heads)) // (N, D)
	for h, head := range heads {
		for i := range n {
			for k := range d {
				concat[i][h*d+k] = head[i][k]
			}
		}
	}
	return mul(concat, wo)
}
