package layers

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"

	"lipformer/ops"
	"lipformer/spec"
)

// headValueNorms returns, per head, ||W^{V,h}||_F and ||A_h W^{V,h}||_F computed by plain
// loops from the definition A_h = W^{Q,h} W^{Q,h}^T / sqrt(d).
func headValueNorms(a *Attention) (raw, eff []float64) {
	wq, wv := matOf(a.WQ), matOf(a.WV)
	D, _ := wq.Dims()
	d := D / a.Heads
	for h := 0; h < a.Heads; h++ {
		var r, e float64
		for i := 0; i < D; i++ {
			for c := h * d; c < (h+1)*d; c++ {
				r += wv.At(i, c) * wv.At(i, c)
				s := 0.0 // (A_h W^V_h)_{ic} = sum_j sum_k Wq_ik Wq_jk Wv_jc / sqrt(d)
				for j := 0; j < D; j++ {
					for k := h * d; k < (h+1)*d; k++ {
						s += wq.At(i, k) * wq.At(j, k) * wv.At(j, c)
					}
				}
				s /= math.Sqrt(float64(d))
				e += s * s
			}
		}
		raw, eff = append(raw, math.Sqrt(r)), append(eff, math.Sqrt(e))
	}
	return raw, eff
}

func TestBalanceL2ValuesMatchesTheRawNorms(t *testing.T) {
	a, err := NewAttention("attn", ops.L2, 12, 3, true, 0.02, 0.01, tensor.Float64, rng(2))
	if err != nil {
		t.Fatal(err)
	}
	wq := mat.DenseCopyOf(matOf(a.WQ))
	before, effBefore := headValueNorms(a)
	scales, err := a.BalanceL2Values()
	if err != nil {
		t.Fatal(err)
	}
	_, after := headValueNorms(a)
	for h := range before {
		if math.Abs(after[h]-before[h]) > 1e-12*before[h] {
			t.Errorf("head %d: ||A W^V|| %v after balancing, want %v", h, after[h], before[h])
		}
		if want := before[h] / effBefore[h]; math.Abs(scales[h]-want) > 1e-9*want || scales[h] < 10 {
			t.Errorf("head %d: scale %v, want %v (large at std 0.02)", h, scales[h], want)
		}
	}
	if !mat.Equal(wq, matOf(a.WQ)) {
		t.Error("balancing changed the query map, hence the logits")
	}
	dp, _ := NewAttention("attn", ops.DotProduct, 4, 2, true, 0.02, 0.01, tensor.Float64, rng(2))
	if _, err := dp.BalanceL2Values(); err == nil {
		t.Error("dot-product attention accepted")
	}
}

func TestBlockBalancesOnlyWhenAsked(t *testing.T) {
	cfg := spec.Model{Width: 8, Heads: 2, Hidden: 16, Arch: plainArch(ops.L2), Norm: spec.PreLN, Std: 0.02, Layers: 2}
	plain, err := NewBlock("b", withDtype(cfg, spec.Float64), rng(5))
	if err != nil {
		t.Fatal(err)
	}
	cfg.BalanceL2 = true
	balanced, err := NewBlock("b", withDtype(cfg, spec.Float64), rng(5))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := headValueNorms(plain.Attn)
	_, eff := headValueNorms(balanced.Attn)
	for h := range raw {
		if math.Abs(eff[h]-raw[h]) > 1e-12*raw[h] {
			t.Errorf("head %d: balanced block's value map norm %v, want %v", h, eff[h], raw[h])
		}
	}
	cfg.Arch = spec.DP
	if _, err := NewBlock("b", withDtype(cfg, spec.Float64), rng(5)); err != nil {
		t.Errorf("a dot-product block with BalanceL2 set: %v", err)
	}
}
