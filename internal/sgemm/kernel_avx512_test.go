//go:build amd64

package sgemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// TestAVX512MatchesAVX2: the AVX-512 kernels, packed, direct and wide (with A packed, and
// with the direct kernel's A in place), give every product the AVX2 kernels' results bit
// for bit, over every transpose, alpha and beta, and sizes that cut tiles and blocks and
// leave an odd panel of B beside pairs of them.
func TestAVX512MatchesAVX2(t *testing.T) {
	if !hasAVX512() {
		t.Skip("no AVX-512 on this processor")
	}
	avx2 := kernels{packed: kernelAVX2, direct: directAVX2}
	sets := map[string]kernels{"packed": {packed: kernelAVX512}, "direct": {packed: kernelAVX512, direct: directAVX512},
		"wide": {packed: kernelAVX512, wide: wideAVX512}, "direct+wide": bestKernels()}
	rng := rand.New(rand.NewPCG(13, 14))
	for name, ks := range sets {
		for _, tA := range transposes {
			for _, tB := range transposes {
				for _, s := range [][3]int{{6, 16, 1}, {13, 37, 29}, {mc + 7, 70, kc + 44}, {384, 64, 128}, {30, 80, 9}, {262, 150, 70}} {
					for _, ab := range [][2]float32{{1, 0}, {1, 1}, {-0.5, 0.3}} {
						m, n, k := s[0], s[1], s[2]
						lda, ldb := k, n
						rowA, rowB := m, k
						if tA != blas.NoTrans {
							lda, rowA = m, k
						}
						if tB != blas.NoTrans {
							ldb, rowB = k, n
						}
						a, b, c0 := randSlice(rng, lda*rowA), randSlice(rng, ldb*rowB), randSlice(rng, m*n)
						want, got := append([]float32(nil), c0...), append([]float32(nil), c0...)
						gemm(avx2, tA, tB, m, n, k, ab[0], a, lda, b, ldb, ab[1], want, n)
						gemm(ks, tA, tB, m, n, k, ab[0], a, lda, b, ldb, ab[1], got, n)
						for i := range want {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%s tA=%c tB=%c m=%d n=%d k=%d alpha=%v beta=%v: element %d is %v, AVX2 %v", name, tA, tB, m, n, k, ab[0], ab[1], i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkKernelSets compares the AVX2 and the AVX-512 kernels, the latter without and
// with the wide 6 x 32 one, on the shapes of benchShapes, on one core, in GFLOP/s:
//
//	go test -run '^$' -bench KernelSets ./internal/sgemm
func BenchmarkKernelSets(b *testing.B) {
	if !hasAVX512() {
		b.Skip("no AVX-512 on this processor")
	}
	sets := []struct {
		name string
		ks   kernels
	}{{"avx2", kernels{packed: kernelAVX2, direct: directAVX2}}, {"avx512", kernels{packed: kernelAVX512, direct: directAVX512}},
		{"avx512-wide", bestKernels()}}
	for _, s := range benchShapes {
		x, w, y, colA, colB := s.operands()
		for _, set := range sets {
			b.Run(s.name+"/"+set.name, func(b *testing.B) {
				for b.Loop() {
					gemm(set.ks, s.tA, s.tB, s.m, s.n, s.k, 1, x, colA, w, colB, 0, y, s.n)
				}
				b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// addAVX2 adds the AVX2 kernels to sets where the processor runs the AVX-512 ones, which
// Sgemm then picks, so that the tests cover both.
func addAVX2(sets map[string]kernels) {
	if hasAVX512() {
		sets["avx2"] = kernels{packed: kernelAVX2, direct: directAVX2}
		sets["avx2-packed"] = kernels{packed: kernelAVX2}
	}
}
