package ref

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// aMatrix returns A_h = W (W)^T / sqrt(d) for a (D, d) matrix W, via gonum.
func aMatrix(w *mat.Dense) *mat.Dense {
	_, d := w.Dims()
	var a mat.Dense
	a.Mul(w, w.T())
	a.Scale(1/math.Sqrt(float64(d)), &a)
	return &a
}

func TestL2MHAOneTokenIsValueMap(t *testing.T) {
	// One token: the only logit is 0, P = [1], head_h = x A_h W^{V,h}.
	rng := rand.New(rand.NewPCG(21, 22))
	wq, wv := randHeads(rng, 2, 6, 1), randHeads(rng, 2, 6, 1)
	wo := randDense(rng, 6, 6, 1)
	x := randSeq(rng, 1, 6, 1)
	for _, causal := range []bool{false, true} {
		got, err := L2MHA(x, wq, wv, wo, causal)
		if err != nil {
			t.Fatal(err)
		}
		concat := mat.NewDense(1, 6, nil)
		for h := range 2 {
			concat.Slice(0, 1, h*3, (h+1)*3).(*mat.Dense).Product(toDense(x), aMatrix(wq[h]), wv[h])
		}
		var want mat.Dense
		want.Mul(concat, wo)
		assertClose(t, "L2MHA(one token)", got, rowsOf(&want), 1e-13)
	}
}

// l2Factorised is docs/math.md's cheap form, written apart from L2MHA:
// head_h = P Q_h M_h with M_h = (W^{Q,h})^T W^{V,h} / sqrt(d) and squared
// distances as |q_i|^2 + |q_j|^2 - 2 q_i.q_j.
func l2Factorised(x [][]float64, wq, wv []*mat.Dense, wo *mat.Dense, causal bool) *mat.Dense {
	xd := toDense(x)
	n, dim := xd.Dims()
	d := dim / len(wq)
	scale := 1 / math.Sqrt(float64(d))
	concat := mat.NewDense(n, dim, nil)
	for h := range wq {
		var q, g, m, qm mat.Dense
		q.Mul(xd, wq[h])
		g.Mul(&q, q.T())
		m.Mul(wq[h].T(), wv[h])
		m.Scale(scale, &m)
		qm.Mul(&q, &m)
		p := mat.NewDense(n, n, nil)
		for i := range n {
			last := n - 1
			if causal {
				last = i
			}
			sum := 0.0
			for j := 0; j <= last; j++ {
				// Logits are <= 0 with L_ii = 0, so exp needs no shift here.
				l := -(g.At(i, i) + g.At(j, j) - 2*g.At(i, j)) * scale
				p.Set(i, j, math.Exp(l))
				sum += p.At(i, j)
			}
			for j := 0; j <= last; j++ {
				p.Set(i, j, p.At(i, j)/sum)
			}
		}
		concat.Slice(0, n, h*d, (h+1)*d).(*mat.Dense).Mul(p, &qm)
	}
	var out mat.Dense
	out.Mul(concat, wo)
	return &out
}

func TestL2MHALiteralEqualsFactorised(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 23))
		heads := int(seed%3) + 1
		dim := 2 * heads * (int(seed%2) + 1)
		wq, wv := randHeads(rng, heads, dim, 0.7), randHeads(rng, heads, dim, 0.7)
		wo := randDense(rng, dim, dim, 0.7)
		x := randSeq(rng, 6, dim, 1)
		for _, causal := range []bool{false, true} {
			got, err := L2MHA(x, wq, wv, wo, causal)
			if err != nil {
				t.Fatal(err)
			}
			assertClose(t, "L2MHA", got, rowsOf(l2Factorised(x, wq, wv, wo, causal)), 1e-12)
		}
	}
}

// With W^K = W^Q, untied L2 attention with values W' = A_h W^{V,h}
// is tied L2 attention with values W^{V,h}.
func TestL2MHAUntiedWithTiedKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 25))
	wq, wv := randHeads(rng, 2, 4, 0.8), randHeads(rng, 2, 4, 0.8)
	wo := randDense(rng, 4, 4, 0.8)
	x := randSeq(rng, 5, 4, 1)
	awv := make([]*mat.Dense, 2)
	for h := range 2 {
		awv[h] = new(mat.Dense)
		awv[h].Mul(aMatrix(wq[h]), wv[h])
	}
	for _, causal := range []bool{false, true} {
		tied, err := L2MHA(x, wq, wv, wo, causal)
		if err != nil {
			t.Fatal(err)
		}
		untied, err := L2MHAUntied(x, wq, wq, awv, wo, causal)
		if err != nil {
			t.Fatal(err)
		}
		assertClose(t, "L2MHAUntied(W^K = W^Q)", untied, tied, 1e-13)
	}
}

func TestL2MHAUntiedHandComputed(t *testing.T) {
	// D = H = 1, W^Q = W^V = W^O = 1, W^K = 2; tokens x = (1, 0).
	// Row 0: q = 1, k = (2, 0): logits (-1, -1), P = (1/2, 1/2), out 1/2.
	// Row 1: q = 0: logits (-4, 0), P = (e^-4, 1)/(1 + e^-4), out e^-4/(1+e^-4).
	one := []*mat.Dense{mat.NewDense(1, 1, []float64{1})}
	two := []*mat.Dense{mat.NewDense(1, 1, []float64{2})}
	got, err := L2MHAUntied([][]float64{{1}, {0}}, one, two, one, one[0], false)
	if err != nil {
		t.Fatal(err)
	}
	e4 := math.Exp(-4)
	assertClose(t, "L2MHAUntied", got, [][]float64{{0.5}, {e4 / (1 + e4)}}, 1e-15)
}
