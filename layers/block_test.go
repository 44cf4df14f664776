package layers

import (
	"fmt"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/internal/ref"
	"lipformer/ops"
	"lipformer/spec"
)

func testBlock(t *testing.T, kind ops.AttentionKind, norm spec.Norm) *Block {
	t.Helper()
	cfg := spec.Model{Width: 6, Heads: 2, Hidden: 12, Arch: plainArch(kind), Norm: norm, Std: 0.4, Layers: 2}
	b, err := NewBlock("blk", withDtype(cfg, spec.Float64), rng(9))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range b.Params() { // biases and gains away from their initial 0 and 1
		if !p.Decay {
			p.fillNormal(rng(uint64(20+i)), 0.3)
			if p.Name[len(p.Name)-4:] == "gain" {
				v := p.Value.Data().([]float64)
				for j := range v {
					v[j] += 1
				}
			}
		}
	}
	return b
}

func TestBlockGradient(t *testing.T) {
	for _, kind := range kinds {
		for _, norm := range []spec.Norm{spec.PreLN, spec.PostLN, spec.NoLN} {
			b := testBlock(t, kind, norm)
			checkGrad(t, fmt.Sprintf("%v %s", kind, norm), b.Params(), gradcheck.Rand(5, 1, 2*4, 6), 2, 4, b.Forward)
		}
	}
}

// TestPreLNBlockMatchesReference composes the plain-Go references by hand:
// x + Attn(LN1(x)), then + MLP(LN2(.)).
func TestPreLNBlockMatchesReference(t *testing.T) {
	b := testBlock(t, ops.L2, spec.PreLN)
	x := gradcheck.Rand(6, 1, 2*4, 6)
	add := func(a, c [][]float64) [][]float64 {
		out := make([][]float64, len(a))
		for i := range a {
			out[i] = make([]float64, len(a[i]))
			for j := range a[i] {
				out[i][j] = a[i][j] + c[i][j]
			}
		}
		return out
	}
	must := func(v [][]float64, err error) [][]float64 {
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	h := rowsOf(x)
	h = add(h, refAttention(t, b.Attn, must(ref.LayerNorm(h, b.LN1.Gain.Float64s(), b.LN1.Bias.Float64s(), b.LN1.Eps)), 4))
	u := must(ref.LayerNorm(h, b.LN2.Gain.Float64s(), b.LN2.Bias.Float64s(), b.LN2.Eps))
	u = must(ref.Linear(u, matOf(b.MLP.Fc.W), b.MLP.Fc.B.Float64s()))
	for _, r := range u {
		for j := range r {
			r[j] = ref.GELU(r[j])
		}
	}
	want := add(h, must(ref.Linear(u, matOf(b.MLP.Proj.W), b.MLP.Proj.B.Float64s())))
	assertRows(t, "pre-LN block", forward(t, x, 2, 4, b.Forward), want, 1e-12)
}

func TestBlockDropoutOnlyInTraining(t *testing.T) {
	cfg := spec.Model{Width: 8, Heads: 2, Hidden: 16, Arch: plainArch(ops.DotProduct), Norm: spec.PreLN, Dropout: 0.5, Std: 0.02, Layers: 1}
	b, err := NewBlock("blk", withDtype(cfg, spec.Float32), rng(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, train := range []bool{false, true} {
		g, _ := NewGraph(tensor.Float32, 2, 4, train)
		x := G.NewMatrix(g.G, tensor.Float32, G.WithShape(8, 8), G.WithName("x"))
		if _, err := b.Forward(g, x); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 0, true: 2}[train]; len(g.masks) != want {
			t.Errorf("train=%t: %d dropout masks, want %d", train, len(g.masks), want)
		}
	}
}
