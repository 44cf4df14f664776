package ops

import (
	"syscall"
	"testing"
	"time"

	"gorgonia.org/tensor"
)

// BenchmarkAttention times the forward and backward of the causal attention op at P3's shape
// (cmd/bench: B = 8, T = 256, D = 256, H = 4) in float32, as one training step runs them, and
// reports the process's CPU time per op (the machine may be shared):
//
//	go test -tags openblas -run '^$' -bench Attention -count 5 ./ops
func BenchmarkAttention(b *testing.B) {
	const batch, t, d, h = 8, 256, 256, 4
	for _, kind := range kinds {
		b.Run(kind.String(), func(b *testing.B) {
			spec := AttentionSpec{Kind: kind, Heads: h, SeqLen: t, Causal: true}
			packed := benchTensor(1, batch*t, kind.blocks()*d)
			dout := benchTensor(2, batch*t, d)
			fwd := newAttentionOp(spec, false)
			bwd := fwd.backward()
			cpu0 := cpuSeconds(b)
			for b.Loop() {
				out, err := fwd.Do(packed)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := bwd.Do(packed, out, dout); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuSeconds(b)-cpu0)/float64(b.N)*1e3, "cpu-ms/op")
		})
	}
}

// benchTensor is an (n, m) float32 tensor of values in [-1, 1) from a fixed sequence.
func benchTensor(seed uint32, n, m int) *tensor.Dense {
	v := make([]float32, n*m)
	x := seed*2654435761 + 1
	for i := range v {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		v[i] = float32(x)/(1<<31) - 1
	}
	return tensor.New(tensor.WithShape(n, m), tensor.WithBacking(v))
}

// cpuSeconds is the user plus system CPU time of the process so far.
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
