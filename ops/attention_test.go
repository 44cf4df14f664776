package ops

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/internal/ref"
	"lipformer/kernel"
)

// attnCase is a small multihead attention problem: x (B*T, D) and full (D, D) weights.
type attnCase struct {
	b, t, d, h     int
	x              *tensor.Dense
	wq, wk, wv, wo *tensor.Dense
}

func newAttnCase(seed uint64, b, t, d, h int) attnCase {
	return attnCase{b, t, d, h,
		gradcheck.Rand(seed, 1, b*t, d),
		gradcheck.Rand(seed+1, 0.6, d, d), gradcheck.Rand(seed+2, 0.6, d, d),
		gradcheck.Rand(seed+3, 0.6, d, d), eye(d)}
}

// matmul is the plain (n, k) x (k, m) product of row-major slices.
func matmul(a []float64, n, k int, b []float64, m int) []float64 {
	out := make([]float64, n*m)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			var s float64
			for l := 0; l < k; l++ {
				s += a[i*k+l] * b[l*m+j]
			}
			out[i*m+j] = s
		}
	}
	return out
}

// concatCols joins (n, D) blocks side by side into (n, len(blocks)*D).
func concatCols(n, d int, blocks ...[]float64) *tensor.Dense {
	w := len(blocks) * d
	out := make([]float64, n*w)
	for i := 0; i < n; i++ {
		for k, bl := range blocks {
			copy(out[i*w+k*d:i*w+(k+1)*d], bl[i*d:(i+1)*d])
		}
	}
	return tensor.New(tensor.WithShape(n, w), tensor.WithBacking(out))
}

// packed builds the op's input from x and the weights with plain loops; for tied L2 the
// value block is x A_h W^{V,h} computed literally.
func (c attnCase) packed(kind AttentionKind) *tensor.Dense {
	n, d := c.b*c.t, c.d
	x := c.x.Data().([]float64)
	q := matmul(x, n, d, c.wq.Data().([]float64), d)
	switch kind {
	case L2:
		hd := d / c.h
		weff := make([]float64, d*d)
		wq, wv := c.wq.Data().([]float64), c.wv.Data().([]float64)
		for h := 0; h < c.h; h++ {
			for r := 0; r < d; r++ {
				for col := 0; col < hd; col++ {
					var s float64
					for k := 0; k < d; k++ {
						var a float64 // A_h[r][k]
						for l := 0; l < hd; l++ {
							a += wq[r*d+h*hd+l] * wq[k*d+h*hd+l]
						}
						s += a / math.Sqrt(float64(hd)) * wv[k*d+h*hd+col]
					}
					weff[r*d+h*hd+col] = s
				}
			}
		}
		return concatCols(n, d, q, matmul(x, n, d, weff, d))
	default:
		k := matmul(x, n, d, c.wk.Data().([]float64), d)
		v := matmul(x, n, d, c.wv.Data().([]float64), d)
		return concatCols(n, d, q, k, v)
	}
}

// reference runs the literal plain-Go layer on every sequence and concatenates the rows.
func (c attnCase) reference(t *testing.T, kind AttentionKind, causal bool) [][]float64 {
	wq, wk, wv := heads(c.wq, c.h), heads(c.wk, c.h), heads(c.wv, c.h)
	wo := mat.NewDense(c.d, c.d, c.wo.Data().([]float64))
	all := rows(c.x)
	var out [][]float64
	for b := 0; b < c.b; b++ {
		x := all[b*c.t : (b+1)*c.t]
		var y [][]float64
		var err error
		switch kind {
		case DotProduct:
			y, err = ref.DPMHA(x, wq, wk, wv, wo, causal)
		case L2:
			y, err = ref.L2MHA(x, wq, wv, wo, causal)
		case L2Untied:
			y, err = ref.L2MHAUntied(x, wq, wk, wv, wo, causal)
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, y...)
	}
	return out
}

// heads splits a (D, D) weight into its per-head (D, d) column blocks.
func heads(w *tensor.Dense, h int) []*mat.Dense {
	d := w.Shape()[0]
	full := mat.NewDense(d, d, w.Data().([]float64))
	hd := d / h
	out := make([]*mat.Dense, h)
	for i := range out {
		out[i] = mat.DenseCopyOf(full.Slice(0, d, i*hd, (i+1)*hd))
	}
	return out
}

func eye(d int) *tensor.Dense {
	v := make([]float64, d*d)
	for i := 0; i < d; i++ {
		v[i*d+i] = 1
	}
	return tensor.New(tensor.WithShape(d, d), tensor.WithBacking(v))
}

var kinds = []AttentionKind{DotProduct, L2, L2Untied}

func TestAttentionMatchesReference(t *testing.T) {
	for _, kind := range kinds {
		for _, causal := range []bool{false, true} {
			for _, h := range []int{1, 2, 3} {
				c := newAttnCase(10, 2, 5, 6, h)
				spec := AttentionSpec{Kind: kind, Heads: h, SeqLen: c.t, Causal: causal}
				got := run1(t, c.packed(kind), func(n *G.Node) (*G.Node, error) { return Attention(n, spec) })
				assertClose(t, fmt.Sprintf("%v causal=%t H=%d", kind, causal, h), got, c.reference(t, kind, causal), 1e-12)
			}
		}
	}
}

func TestAttentionGradient(t *testing.T) {
	for _, kind := range kinds {
		for _, causal := range []bool{false, true} {
			c := newAttnCase(20, 2, 4, 6, 2)
			spec := AttentionSpec{Kind: kind, Heads: 2, SeqLen: c.t, Causal: causal}
			res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
				return Attention(in[0], spec)
			}, []gradcheck.Input{{Name: "packed", Value: c.packed(kind)}}, 5, 1e-5)
			assertGrad(t, fmt.Sprintf("%v causal=%t", kind, causal), res, err)
		}
	}
}

// TestAttentionExtremeInputs: queries 1e3 apart give L2 logits near -1e6 and DP logits of
// +-1e6; every output must stay finite and a convex combination of the values.
func TestAttentionExtremeInputs(t *testing.T) {
	for _, kind := range kinds {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			c := newAttnCase(30, 1, 6, 4, 1)
			p := c.packed(kind).Data().([]float64)
			for i := range p {
				p[i] *= 1e3
			}
			x := tensor.New(tensor.Of(dt), tensor.WithShape(c.packed(kind).Shape()...))
			for i, v := range p {
				if dt == tensor.Float32 {
					x.Data().([]float32)[i] = float32(v)
				} else {
					x.Data().([]float64)[i] = v
				}
			}
			spec := AttentionSpec{Kind: kind, Heads: 1, SeqLen: 6, Causal: true}
			g := G.NewGraph()
			n := G.NodeFromAny(g, x, G.WithName("x"))
			y, err := Attention(n, spec)
			if err != nil {
				t.Fatal(err)
			}
			m := G.NewTapeMachine(g)
			if err := m.RunAll(); err != nil {
				t.Fatal(err)
			}
			for _, v := range toF64(y.Value()) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%v %v: non-finite output %v", kind, dt, v)
				}
			}
			m.Close()
		}
	}
}

func TestAttentionRejectsBadShapes(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(10, 12), G.WithName("x"))
	for _, spec := range []AttentionSpec{
		{Kind: DotProduct, Heads: 3, SeqLen: 5}, // D = 4 is not a multiple of 3 heads
		{Kind: DotProduct, Heads: 2, SeqLen: 3}, // 10 rows are not sequences of 3
		{Kind: L2, Heads: 5, SeqLen: 5},         // D = 6, 5 heads
	} {
		if _, err := Attention(x, spec); err == nil {
			t.Errorf("%+v accepted for a (10, 12) input", spec)
		}
	}
}

func TestL2ValuesGradient(t *testing.T) {
	res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return L2Values(in[0], in[1], 2)
	}, []gradcheck.Input{{Name: "wq", Value: gradcheck.Rand(1, 1, 6, 6)}, {Name: "wv", Value: gradcheck.Rand(2, 1, 6, 6)}}, 3, 1e-5)
	assertGrad(t, "l2 values", res, err)
}

func TestL2ValuesMatchesLiteralForm(t *testing.T) {
	c := newAttnCase(40, 1, 6, 6, 3)
	c.x = eye(6)               // then the value block of packed(L2) is W_eff itself
	want := rows(c.packed(L2)) // (6, 12): [x W^Q | W_eff]
	for i := range want {
		want[i] = want[i][6:]
	}
	g := G.NewGraph()
	wq := G.NodeFromAny(g, c.wq, G.WithName("wq"))
	wv := G.NodeFromAny(g, c.wv, G.WithName("wv"))
	y, err := L2Values(wq, wv, 3)
	if err != nil {
		t.Fatal(err)
	}
	runGraph(t, g)
	assertClose(t, "l2 values", toF64(y.Value()), want, 1e-13)
}

// TestL2ValuesIsWqTimesL2Mix: L2Values is wq's column blocks times kernel.L2Mix's M_h.
func TestL2ValuesIsWqTimesL2Mix(t *testing.T) {
	const rows, cols, heads = 5, 6, 3 // d = 2; rows != cols catches a swap
	d := cols / heads
	wq := gradcheck.Rand(50, 1, rows, cols).Data().([]float64)
	wv := gradcheck.Rand(51, 1, rows, cols).Data().([]float64)
	got, err := kernel.L2Mix(wq, wv, rows, cols, heads)
	if err != nil {
		t.Fatal(err)
	}
	g := G.NewGraph()
	y, err := L2Values(G.NodeFromAny(g, tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(wq)), G.WithName("wq")),
		G.NodeFromAny(g, tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(wv)), G.WithName("wv")), heads)
	if err != nil {
		t.Fatal(err)
	}
	runGraph(t, g)
	want := make([][]float64, rows)
	for r := range rows {
		want[r] = make([]float64, cols)
		for h := range heads {
			for b := range d {
				for a := range d {
					want[r][h*d+b] += wq[r*cols+h*d+a] * got[h*d*d+a*d+b]
				}
			}
		}
	}
	assertClose(t, "L2Values against wq M_h", toF64(y.Value()), want, 1e-13)
}

// biasCase is a (H, T) position bias drawn from seed, with rows as slices for the reference.
func biasCase(seed uint64, h, t int) (*tensor.Dense, [][]float64) {
	b := gradcheck.Rand(seed, 1.5, h, t)
	v := b.Data().([]float64)
	rows := make([][]float64, h)
	for i := range rows {
		rows[i] = v[i*t : (i+1)*t]
	}
	return b, rows
}

func TestAttentionBiasedMatchesReference(t *testing.T) {
	for _, h := range []int{1, 2, 3} {
		for _, seqLen := range []int{5, 70} { // one block, and two causal blocks of P
			c := newAttnCase(12, 2, seqLen, 6, h)
			bias, rowsOfBias := biasCase(13, h, seqLen)
			g := G.NewGraph()
			x := G.NodeFromAny(g, c.packed(L2), G.WithName("packed"))
			y, err := AttentionBiased(x, G.NodeFromAny(g, bias, G.WithName("bias")), AttentionSpec{Kind: L2, Heads: h, SeqLen: seqLen, Causal: true})
			if err != nil {
				t.Fatal(err)
			}
			runGraph(t, g)
			wq, wv := heads(c.wq, h), heads(c.wv, h)
			wo := mat.NewDense(c.d, c.d, c.wo.Data().([]float64))
			all := rows(c.x)
			var want [][]float64
			for b := range c.b {
				out, err := ref.L2MHABiased(all[b*seqLen:(b+1)*seqLen], wq, wv, wo, rowsOfBias)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, out...)
			}
			assertClose(t, fmt.Sprintf("biased H=%d T=%d", h, seqLen), y.Value().Data().([]float64), want, 1e-12)
		}
	}
}

func TestAttentionBiasedGradient(t *testing.T) {
	for _, seqLen := range []int{4, 66} {
		c := newAttnCase(21, 2, seqLen, 6, 2)
		bias, _ := biasCase(22, 2, seqLen+3) // entries past T: read by nothing, gradient 0
		spec := AttentionSpec{Kind: L2, Heads: 2, SeqLen: seqLen, Causal: true}
		res, err := gradcheck.Check(func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
			return AttentionBiased(in[0], in[1], spec)
		}, []gradcheck.Input{{Name: "packed", Value: c.packed(L2)}, {Name: "bias", Value: bias}}, 5, 1e-5)
		assertGrad(t, fmt.Sprintf("biased T=%d", seqLen), res, err)
	}
}

func TestAttentionBiasedRejects(t *testing.T) {
	g := G.NewGraph()
	c := newAttnCase(1, 1, 4, 6, 2)
	x := G.NodeFromAny(g, c.packed(L2), G.WithName("packed"))
	bias := G.NodeFromAny(g, gradcheck.Rand(2, 1, 2, 3), G.WithName("bias"))
	if _, err := AttentionBiased(x, bias, AttentionSpec{Kind: L2, Heads: 2, SeqLen: 4, Causal: true}); err == nil {
		t.Error("a (2, 3) bias was accepted for T = 4")
	}
	if _, err := AttentionBiased(x, G.NodeFromAny(g, gradcheck.Rand(2, 1, 3, 4), G.WithName("b3")), AttentionSpec{Kind: L2, Heads: 2, SeqLen: 4, Causal: true}); err == nil {
		t.Error("a bias of 3 heads was accepted for 2")
	}
	if _, err := AttentionBiased(x, bias, AttentionSpec{Kind: L2, Heads: 2, SeqLen: 3, Causal: false}); err == nil {
		t.Error("a bias was accepted without the causal mask")
	}
	if _, err := Attention(x, AttentionSpec{Kind: L2, Heads: 2, SeqLen: 4, Causal: true, Bias: true}); err == nil {
		t.Error("Attention took a spec with a bias")
	}
}
