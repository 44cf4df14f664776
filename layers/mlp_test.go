package layers

import (
	"testing"

	"gorgonia.org/tensor"

	"lipformer/internal/gradcheck"
	"lipformer/internal/ref"
)

func TestMLPForwardAndGradient(t *testing.T) {
	m := NewMLP("mlp", 4, 8, 0.5, 0.5, tensor.Float64, rng(6))
	m.Fc.B.fillNormal(rng(7), 0.3)
	m.Proj.B.fillNormal(rng(8), 0.3)
	x := gradcheck.Rand(9, 1, 5, 4)
	h, err := ref.Linear(rowsOf(x), matOf(m.Fc.W), m.Fc.B.Float64s())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range h {
		for j := range r {
			r[j] = ref.GELU(r[j])
		}
	}
	want, err := ref.Linear(h, matOf(m.Proj.W), m.Proj.B.Float64s())
	if err != nil {
		t.Fatal(err)
	}
	assertRows(t, "mlp", forward(t, x, 1, 5, m.Forward), want, 1e-13)
	checkGrad(t, "mlp", []*Param{m.Fc.W, m.Fc.B, m.Proj.W, m.Proj.B}, x, 1, 5, m.Forward)
}

func TestLayerNormLayerForwardAndGradient(t *testing.T) {
	ln := NewLayerNorm("ln", 6, tensor.Float64)
	ln.Gain.fillNormal(rng(1), 1)
	ln.Bias.fillNormal(rng(2), 1)
	x := gradcheck.Rand(3, 2, 4, 6)
	want, err := ref.LayerNorm(rowsOf(x), ln.Gain.Float64s(), ln.Bias.Float64s(), ln.Eps)
	if err != nil {
		t.Fatal(err)
	}
	assertRows(t, "layernorm", forward(t, x, 1, 4, ln.Forward), want, 1e-12)
	checkGrad(t, "layernorm", []*Param{ln.Gain, ln.Bias}, x, 1, 4, ln.Forward)
}
