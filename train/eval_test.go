package train

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"lipformer/model"
	"lipformer/spec"
)

// TestEvaluateStridedIsExact: at every stride, the mean loss is that of the decoder (a
// separate plain-Go implementation) predicting each target from the bytes the stride's
// windows give it: with stride S, target p > T from the window of T bytes that ends where
// the earlier windows' scored targets end. Stride 1 gives every target after the first T
// all T bytes before it. The top-1 hits are the decoder's argmax hits of the same targets.
func TestEvaluateStridedIsExact(t *testing.T) {
	cfg := model.Config{Arch: spec.L2, Layers: 2, Heads: 2, Width: 8, Context: 5, Vocab: 7, Norm: spec.PreLN, LipC: 0.9, Dtype: spec.Float64, Std: 0.3}
	m, err := model.New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.NewProgram(model.Eval, 3)
	if err != nil {
		t.Fatal(err)
	}
	d, err := m.NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(4, 0))
	tokens := make([]int, 29)
	for i := range tokens {
		tokens[i] = r.IntN(cfg.Vocab)
	}
	T := cfg.Context
	for S := 1; S <= T; S++ {
		var want float64
		wantHits := 0
		for target := 1; target < len(tokens); target++ {
			start := 0 // the window that scores target: window 0, or the first w with w*S + T >= target
			if target > T {
				w := (target - T + S - 1) / S
				start = w * S
			}
			logits, err := d.Prefill(tokens[start:target])
			if err != nil {
				t.Fatal(err)
			}
			want += logSumExp(logits) - logits[tokens[target]]
			best := 0
			for j, z := range logits {
				if z > logits[best] {
					best = j
				}
			}
			if best == tokens[target] {
				wantHits++
			}
		}
		want /= float64(len(tokens) - 1)
		got, n, err := EvaluateStrided(context.Background(), p, tokens, S)
		if err != nil {
			t.Fatal(err)
		}
		if n != len(tokens)-1 || math.Abs(got-want) > 1e-12 {
			t.Errorf("stride %d: loss %.15g over %d bytes, the decoder's %.15g over %d", S, got, n, want, len(tokens)-1)
		}
		var calls [][2]int // (done, total) after each batch
		s, err := EvaluateScore(context.Background(), p, tokens, S, func(done, total int) { calls = append(calls, [2]int{done, total}) })
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range calls {
			if c != [2]int{i + 1, len(calls)} {
				t.Errorf("stride %d: progress call %d was %v, want %v", S, i, c, [2]int{i + 1, len(calls)})
			}
		}
		if len(calls) == 0 {
			t.Errorf("stride %d: progress was never told", S)
		}
		if s.Hits != wantHits || s.Nats != got || math.Abs(s.Accuracy()-float64(wantHits)/float64(n)) > 1e-15 {
			t.Errorf("stride %d: %d hits (loss %v), the decoder's %d", S, s.Hits, s.Nats, wantHits)
		}
	}
}

// logSumExp is log sum_i exp(x_i).
func logSumExp(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = max(m, v)
	}
	var s float64
	for _, v := range x {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}
