package expressive

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"lipformer/train"
)

// BenchmarkGDStep times one gd iteration (loss, gradient and logits from the compiled
// graph, the precision check, an Adam step) at d = 16. Besides wall time it
// reports cpu-s/op, the process's CPU time per iteration, which stays meaningful when
// other jobs share the cores:
//
//	nice go test ./expressive/ -run '^$' -bench 'GDStep/L=1024/k=2' -benchtime 10x
func BenchmarkGDStep(b *testing.B) {
	const d, eps = 16, 0.1
	for _, L := range []int{128, 512, 1024} {
		for _, k := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("L=%d/k=%d", L, k), func(b *testing.B) { benchGDStep(b, L, k, d, eps) })
		}
	}
}

// benchGDStep times gd iterations on one random target of length L and sparsity k.
func benchGDStep(b *testing.B, L, k, d int, eps float64) {
	set, err := NewGDSet(d, 1, DefaultGDOptions(eps))
	if err != nil {
		b.Fatal(err)
	}
	tg, err := RandomTarget(L, k, 10, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		b.Fatal(err)
	}
	gm, err := set.machine(tg)
	if err != nil {
		b.Fatal(err)
	}
	if err := gm.lg.SetTarget(tg); err != nil {
		b.Fatal(err)
	}
	x := gm.X()
	copy(x, randomInput(L, 2*d, 0.5, 3).RawMatrix().Data)
	grad := make([]float64, len(x))
	opt, err := train.NewAdam([]train.Param[float64]{{Name: "X", Value: x, Grad: grad}}, train.DefaultAdamConfig())
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := cpuSeconds(b)
	for b.Loop() {
		_, z, err := gm.Run(grad)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := MeasureLogits(z, tg); err != nil {
			b.Fatal(err)
		}
		if err := opt.Step(0.2); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuSeconds(b)-cpu0)/float64(b.N), "cpu-s/op")
}

// cpuSeconds is the user plus system CPU time of the process so far.
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
