package ref

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// attentionFunc is one attention variant with its weights bound.
type attentionFunc func(x [][]float64, causal bool) ([][]float64, error)

// attentionCase is a named attention variant on random weights, D = 6, H = 2.
type attentionCase struct {
	name string
	f    attentionFunc
}

func attentionCases(seed uint64) []attentionCase {
	rng := rand.New(rand.NewPCG(seed, 99))
	const dim, heads = 6, 2
	wq, wk, wv := randHeads(rng, heads, dim, 0.6), randHeads(rng, heads, dim, 0.6), randHeads(rng, heads, dim, 0.6)
	wo := randDense(rng, dim, dim, 0.6)
	return []attentionCase{
		{"DPMHA", func(x [][]float64, c bool) ([][]float64, error) { return DPMHA(x, wq, wk, wv, wo, c) }},
		{"L2MHA", func(x [][]float64, c bool) ([][]float64, error) { return L2MHA(x, wq, wv, wo, c) }},
		{"L2MHAUntied", func(x [][]float64, c bool) ([][]float64, error) { return L2MHAUntied(x, wq, wk, wv, wo, c) }},
	}
}

// With a causal mask, output row i is the non-causal output of the prefix
// x_0..x_i at its last row; in particular row 0 only sees itself.
func TestAttentionCausalIsPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := randSeq(rng, 7, 6, 1)
	for _, c := range attentionCases(7) {
		got, err := c.f(x, true)
		if err != nil {
			t.Fatal(err)
		}
		for i := range x {
			prefix, err := c.f(x[:i+1], false)
			if err != nil {
				t.Fatal(err)
			}
			assertClose(t, c.name+" causal row", [][]float64{got[i]}, [][]float64{prefix[i]}, 1e-13)
		}
	}
}

// Without a mask every variant is permutation equivariant: F(PX) = P F(X).
func TestAttentionPermutationEquivariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	x := randSeq(rng, 6, 6, 1)
	perm := rng.Perm(6)
	px := make([][]float64, 6)
	for i, p := range perm {
		px[i] = x[p]
	}
	for _, c := range attentionCases(10) {
		fx, err := c.f(x, false)
		if err != nil {
			t.Fatal(err)
		}
		fpx, err := c.f(px, false)
		if err != nil {
			t.Fatal(err)
		}
		want := make([][]float64, 6)
		for i, p := range perm {
			want[i] = fx[p]
		}
		assertClose(t, c.name+"(PX)", fpx, want, 1e-13)
	}
}

// concatHeads returns [w_1, ..., w_H] as one (D, D) matrix.
func concatHeads(ws []*mat.Dense) *mat.Dense {
	r, d := ws[0].Dims()
	full := mat.NewDense(r, d*len(ws), nil)
	for h, w := range ws {
		full.Slice(0, r, h*d, (h+1)*d).(*mat.Dense).Copy(w)
	}
	return full
}

func TestDPMHAOneTokenIsValueMap(t *testing.T) {
	// One token: P = [1], so F(x) = x [W^{V,1} ... W^{V,H}] W^O.
	rng := rand.New(rand.NewPCG(11, 12))
	wq, wk, wv := randHeads(rng, 3, 6, 1), randHeads(rng, 3, 6, 1), randHeads(rng, 3, 6, 1)
	wo := randDense(rng, 6, 6, 1)
	x := randSeq(rng, 1, 6, 1)
	got, err := DPMHA(x, wq, wk, wv, wo, false)
	if err != nil {
		t.Fatal(err)
	}
	var want mat.Dense
	want.Product(toDense(x), concatHeads(wv), wo)
	assertClose(t, "DPMHA(one token)", got, rowsOf(&want), 1e-13)
}

// dpDense is DP-MHA in matrix form with gonum, written apart from DPMHA.
func dpDense(x [][]float64, wq, wk, wv []*mat.Dense, wo *mat.Dense) *mat.Dense {
	xd := toDense(x)
	n, dim := xd.Dims()
	d := dim / len(wq)
	concat := mat.NewDense(n, dim, nil)
	for h := range wq {
		var q, k, v, s mat.Dense
		q.Mul(xd, wq[h])
		k.Mul(xd, wk[h])
		v.Mul(xd, wv[h])
		s.Mul(&q, k.T())
		s.Scale(1/math.Sqrt(float64(d)), &s)
		p := mat.NewDense(n, n, nil)
		for i := range n {
			row := s.RawRowView(i)
			sum := 0.0
			for j := range n {
				sum += math.Exp(row[j])
			}
			for j := range n {
				p.Set(i, j, math.Exp(row[j])/sum)
			}
		}
		concat.Slice(0, n, h*d, (h+1)*d).(*mat.Dense).Mul(p, &v)
	}
	var out mat.Dense
	out.Mul(concat, wo)
	return &out
}

func TestDPMHAMatchesMatrixForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	wq, wk, wv := randHeads(rng, 2, 8, 0.5), randHeads(rng, 2, 8, 0.5), randHeads(rng, 2, 8, 0.5)
	wo := randDense(rng, 8, 8, 0.5)
	x := randSeq(rng, 5, 8, 1)
	got, err := DPMHA(x, wq, wk, wv, wo, false)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "DPMHA", got, rowsOf(dpDense(x, wq, wk, wv, wo)), 1e-13)
}

func TestAttentionShapeErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	x := randSeq(rng, 3, 6, 1)
	good := randHeads(rng, 2, 6, 1)
	wo := randDense(rng, 6, 6, 1)
	bad := []*mat.Dense{good[0], randDense(rng, 6, 2, 1)}
	cases := map[string]func() error{
		"wk[1] 6x2":      func() error { _, err := DPMHA(x, good, bad, good, wo, false); return err },
		"wv has 1 head":  func() error { _, err := DPMHA(x, good, good, good[:1], wo, false); return err },
		"wo 6x5":         func() error { _, err := L2MHA(x, good, good, randDense(rng, 6, 5, 1), false); return err },
		"nil wo":         func() error { _, err := L2MHA(x, good, good, nil, false); return err },
		"no heads":       func() error { _, err := L2MHA(x, nil, nil, wo, false); return err },
		"D=6, H=4":       func() error { _, err := L2MHA(x, randHeads(rng, 4, 6, 1), good, wo, false); return err },
		"x ragged":       func() error { _, err := L2MHA([][]float64{{1, 2, 3, 4, 5, 6}, {1}}, good, good, wo, false); return err },
		"untied nil wk":  func() error { _, err := L2MHAUntied(x, good, []*mat.Dense{nil, nil}, good, wo, false); return err },
		"x D=4 for W 6x": func() error { _, err := L2MHAUntied(randSeq(rng, 2, 4, 1), good, good, good, wo, true); return err },
	}
	for name, f := range cases {
		if err := f(); err == nil {
			t.Errorf("%s: want error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
