package train

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refNorm is the plain float64 Euclidean norm of all elements, summed
// sequentially.
func refNorm(grads [][]float64) float64 {
	var sum float64
	for _, g := range grads {
		for _, x := range g {
			sum += x * x
		}
	}
	return math.Sqrt(sum)
}

// randomGrads returns gradients of the given lengths and their float64 values.
func randomGrads[T Float](rng *rand.Rand, sizes ...int) ([][]T, [][]float64) {
	var grads [][]T
	var ref [][]float64
	for _, n := range sizes {
		g := make([]T, n)
		r := make([]float64, n)
		for i := range g {
			g[i] = T(rng.NormFloat64())
			r[i] = float64(g[i])
		}
		grads = append(grads, g)
		ref = append(ref, r)
	}
	return grads, ref
}

func checkGlobalNorm[T Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	grads, ref := randomGrads[T](rng, 0, 1, 3, 4, 5, 1000)
	got, want := GlobalNorm(grads), refNorm(ref)
	// Summing n positive terms in any order errs by at most n unit roundoffs.
	if math.Abs(got-want) > 1013*0x1p-53*want {
		t.Fatalf("GlobalNorm = %.17g, want %.17g", got, want)
	}
	if got := GlobalNorm([][]T{{3}, {}, {4}}); got != 5 {
		t.Fatalf("GlobalNorm of (3, 4) = %v, want 5", got)
	}
	if got := GlobalNorm[T](nil); got != 0 {
		t.Fatalf("GlobalNorm of nothing = %v, want 0", got)
	}
}

func TestGlobalNorm(t *testing.T) {
	t.Run("float32", checkGlobalNorm[float32])
	t.Run("float64", checkGlobalNorm[float64])
}

func TestGlobalNormAvoidsOverflow(t *testing.T) {
	grads := [][]float64{{3e200}, {-4e200, 0}}
	if got, want := GlobalNorm(grads), 5e200; math.Abs(got-want) > 1e-15*want {
		t.Fatalf("GlobalNorm = %v, want %v", got, want)
	}
}

func TestGlobalNormNonFinite(t *testing.T) {
	tests := []struct {
		name  string
		grads [][]float32
		isNaN bool
	}{
		{"NaN", [][]float32{{1, float32(math.NaN())}, {2}}, true},
		{"+Inf", [][]float32{{1}, {float32(math.Inf(1))}}, false},
		{"-Inf", [][]float32{{float32(math.Inf(-1)), 1}}, false},
		{"Inf and NaN", [][]float32{{float32(math.Inf(1)), float32(math.NaN())}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := GlobalNorm(tt.grads)
			if tt.isNaN != math.IsNaN(got) || (!tt.isNaN && !math.IsInf(got, 1)) {
				t.Fatalf("GlobalNorm = %v", got)
			}
			before := [][]float32{append([]float32(nil), tt.grads[0]...)}
			if n := ClipGlobalNorm(tt.grads, 1); math.IsNaN(n) != math.IsNaN(got) || (!math.IsNaN(n) && n != got) {
				t.Fatalf("ClipGlobalNorm returned %v, want %v", n, got)
			}
			for i, x := range tt.grads[0] {
				if math.Float32bits(x) != math.Float32bits(before[0][i]) {
					t.Fatalf("ClipGlobalNorm changed non-finite gradients: %v, was %v", tt.grads[0], before[0])
				}
			}
		})
	}
}

func checkClip[T Float](t *testing.T, tol float64) {
	rng := rand.New(rand.NewPCG(9, 10))
	grads, ref := randomGrads[T](rng, 17, 5, 64)
	norm := refNorm(ref)
	maxNorm := norm / 3
	got := ClipGlobalNorm(grads, maxNorm)
	if math.Abs(got-norm) > 1e-14*norm {
		t.Fatalf("ClipGlobalNorm returned %.17g, want the norm before clipping %.17g", got, norm)
	}
	for i, g := range grads {
		for j, x := range g {
			want := ref[i][j] * maxNorm / norm
			if math.Abs(float64(x)-want) > tol*math.Abs(want) {
				t.Fatalf("clipped gradient [%d][%d] = %.17g, want %.17g", i, j, x, want)
			}
		}
	}
	if after := GlobalNorm(grads); math.Abs(after-maxNorm) > tol*maxNorm {
		t.Fatalf("norm after clipping %.17g, want %.17g", after, maxNorm)
	}
}

func TestClipGlobalNormScales(t *testing.T) {
	// Tolerances: a couple of unit roundoffs of T (the scale is rounded to T).
	t.Run("float32", func(t *testing.T) { checkClip[float32](t, 2e-7) })
	t.Run("float64", func(t *testing.T) { checkClip[float64](t, 1e-15) })
}

func TestClipGlobalNormLeavesSmallOrDisabled(t *testing.T) {
	for _, maxNorm := range []float64{5, 10, 0, -1, math.NaN(), math.Inf(1)} {
		grads := [][]float64{{3}, {4}}
		if got := ClipGlobalNorm(grads, maxNorm); got != 5 {
			t.Errorf("maxNorm %v: returned %v, want 5", maxNorm, got)
		}
		if grads[0][0] != 3 || grads[1][0] != 4 {
			t.Errorf("maxNorm %v: gradients changed to %v", maxNorm, grads)
		}
	}
}

func TestClipDoesNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	g32, _ := randomGrads[float32](rng, 100, 7)
	g64, _ := randomGrads[float64](rng, 100, 7)
	if n := testing.AllocsPerRun(100, func() { ClipGlobalNorm(g32, 0.5) }); n != 0 {
		t.Errorf("ClipGlobalNorm[float32] allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { ClipGlobalNorm(g64, 0.5) }); n != 0 {
		t.Errorf("ClipGlobalNorm[float64] allocates %v times", n)
	}
}

func BenchmarkGlobalNorm(b *testing.B) {
	g := [][]float32{make([]float32, 1<<20)}
	for i := range g[0] {
		g[0][i] = float32(i%13) - 6
	}
	b.SetBytes(4 << 20)
	for b.Loop() {
		GlobalNorm(g)
	}
}

// TestClipGlobalNormInParallel: the clipping the Stepper runs on every core
// (clipGlobalNorm with scratch) returns the serial ClipGlobalNorm's norm and leaves its
// gradients, bit for bit, on tensors of many sizes and magnitudes, clipped or not, and on
// gradients whose sum of squares overflows.
func TestClipGlobalNormInParallel(t *testing.T) {
	t.Run("float32", checkClipInParallel[float32])
	t.Run("float64", checkClipInParallel[float64])
}

func checkClipInParallel[T Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	sizes := []int{0, 1, 3, 4096, 5, 130, 65536, 7, 128, 16384, 2, 512}
	for _, c := range []struct {
		name    string
		scale   float64
		maxNorm float64
	}{{"clipped", 1, 0.5}, {"unclipped", 1e-3, 1e6}, {"overflow", 1e200, 1}} {
		if c.scale > 1e30 && any(T(0)) == any(float32(0)) {
			continue // float32 gradients cannot hold such values
		}
		serial, _ := randomGrads[T](rng, sizes...)
		par := make([][]T, len(serial))
		for i, g := range serial {
			for j := range g {
				g[j] *= T(c.scale * math.Exp(4*rng.NormFloat64()))
			}
			par[i] = append([]T(nil), g...)
		}
		want := ClipGlobalNorm(serial, c.maxNorm)
		got := clipGlobalNorm(par, c.maxNorm, make([]float64, len(par)))
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%s: norm %.17g, want %.17g", c.name, got, want)
		}
		for i := range serial {
			for j := range serial[i] {
				if par[i][j] != serial[i][j] {
					t.Fatalf("%s: tensor %d element %d: %v, want %v", c.name, i, j, par[i][j], serial[i][j])
				}
			}
		}
	}
}
