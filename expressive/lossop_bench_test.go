package expressive

import (
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
)

// BenchmarkGDLossOp times the loss op's forward pass (loss and dL/dZ, one core) at
// L = 1024, k = 2, on unit-variance logits whose support entries are raised by 4 (early:
// most leak arguments below 0, as after BenchmarkGDStep's first few steps) or by 8 (late:
// most leak terms below 2^-53, as once the leak condition holds with a margin):
//
//	nice go test ./expressive/ -run '^$' -bench GDLossOp -cpu 1
func BenchmarkGDLossOp(b *testing.B) {
	const L, k, eps = 1024, 2, 0.1
	tg, err := RandomTarget(L, k, 10, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("early", func(b *testing.B) { benchGDLossOp(b, tg, eps, 4) })
	b.Run("late", func(b *testing.B) { benchGDLossOp(b, tg, eps, 8) })
}

// benchGDLossOp times the loss op on unit-variance logits whose support entries are raised
// by shift.
func benchGDLossOp(b *testing.B, tg *Target, eps, shift float64) {
	lt := newLossTarget(tg.L, maxRowSize(tg), eps)
	if err := lt.set(tg); err != nil {
		b.Fatal(err)
	}
	zm := randomInput(tg.L, tg.L, 1, 3) // (L, L)
	for i, row := range tg.Rows {
		for _, e := range row {
			zm.Set(i, e.Col, zm.At(i, e.Col)+shift)
		}
	}
	z := denseTensor(zm)
	loss, err := gdLoss(G.NodeFromAny(G.NewGraph(), z, G.WithName("Z")), lt)
	if err != nil {
		b.Fatal(err)
	}
	op := loss.Op().(*gdLossOp)
	cpu0 := cpuSeconds(b)
	for b.Loop() {
		if _, err := op.Do(z); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuSeconds(b)-cpu0)/float64(b.N), "cpu-s/op")
}
