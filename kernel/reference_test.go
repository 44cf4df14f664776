package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	"lipformer/internal/ref"
)

// normals is n standard normal values from seed.
func normals(seed uint64, n int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// asRows views v as rows of width d.
func asRows(v []float64, d int) [][]float64 {
	out := make([][]float64, len(v)/d)
	for i := range out {
		out[i] = v[i*d : (i+1)*d]
	}
	return out
}

// assertNear fails unless got[i] and want[i] agree to tol for every i.
func assertNear(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol {
			t.Fatalf("%s [%d]: got %.17g, want %.17g", what, i, got[i], want[i])
		}
	}
}

// numGrad is the central difference gradient of f at x, step 1e-6.
func numGrad(x []float64, f func() float64) []float64 {
	g := make([]float64, len(x))
	for i := range x {
		v := x[i]
		x[i] = v + 1e-6
		up := f()
		x[i] = v - 1e-6
		down := f()
		x[i] = v
		g[i] = (up - down) / 2e-6
	}
	return g
}

// dot is the inner product of a and b.
func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestLayerNormRowsAgainstReference: LayerNormRows equals internal/ref's LayerNorm in float64,
// and LayerNormGrad and LayerNormGainGrad are the gradients of <dy, LayerNormRows(x)> by x and
// gamma (central differences).
func TestLayerNormRowsAgainstReference(t *testing.T) {
	const n, d, eps = 7, 5, 1e-5
	x, gamma, beta, dy := normals(1, n*d), normals(2, d), normals(3, d), normals(4, n*d)
	want, err := ref.LayerNorm(asRows(x, d), gamma, beta, eps)
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float64, n*d)
	LayerNormRows(y, x, gamma, beta, eps)
	var flat []float64
	for _, r := range want {
		flat = append(flat, r...)
	}
	assertNear(t, "layernorm", y, flat, 1e-12)
	loss := func() float64 {
		LayerNormRows(y, x, gamma, beta, eps)
		return dot(dy, y)
	}
	dx, dgamma := make([]float64, n*d), make([]float64, d)
	LayerNormGrad(dx, x, gamma, dy, eps)
	LayerNormGainGrad(dgamma, x, dy, eps, &Workspace{})
	assertNear(t, "layernorm dx", dx, numGrad(x, loss), 1e-6)
	assertNear(t, "layernorm dgamma", dgamma, numGrad(gamma, loss), 1e-6)
}

// TestSoftmaxRowsAgainstReference: SoftmaxRows equals internal/ref's Softmax in float64, with
// and without the causal mask, and SoftmaxGradRows is the gradient of <dy, softmax(x)>.
func TestSoftmaxRowsAgainstReference(t *testing.T) {
	const n = 6
	x, dy := normals(5, n*n), normals(6, n*n)
	for _, causal := range []bool{false, true} {
		want, err := ref.Softmax(asRows(x, n), causal)
		if err != nil {
			t.Fatal(err)
		}
		y := make([]float64, n*n)
		SoftmaxRows(y, x, n, causal)
		var flat []float64
		for _, r := range want {
			flat = append(flat, r...)
		}
		assertNear(t, "softmax", y, flat, 1e-15)
	}
	y, dx := make([]float64, n*n), make([]float64, n*n)
	SoftmaxRows(y, x, n, false)
	SoftmaxGradRows(dx, y, dy, n)
	assertNear(t, "softmax dx", dx, numGrad(x, func() float64 {
		SoftmaxRows(y, x, n, false)
		return dot(dy, y)
	}), 1e-8)
}

// TestNLLAgainstReference: NLL's sum over its count equals internal/ref's CrossEntropy, an
// ignored target is not counted, NLLGrad is the gradient of g times that mean, and a target
// beyond the vocabulary is an error.
func TestNLLAgainstReference(t *testing.T) {
	const n, v, g = 5, 4, 0.7
	logits := normals(7, n*v)
	targets := []int{2, -1, 0, 3, 1}
	want, err := ref.CrossEntropy(asRows(logits, v), targets)
	if err != nil {
		t.Fatal(err)
	}
	rowLoss := make([]float64, n)
	sum, count, err := NLL(logits, targets, v, rowLoss)
	if err != nil || count != 4 {
		t.Fatalf("count %d, error %v: want 4, nil", count, err)
	}
	assertNear(t, "nll", []float64{sum / float64(count)}, []float64{want}, 1e-14)
	d := make([]float64, n*v)
	NLLGrad(d, logits, targets, v, g)
	assertNear(t, "nll grad", d, numGrad(logits, func() float64 {
		s, c, _ := NLL(logits, targets, v, rowLoss)
		return g * s / float64(c)
	}), 1e-8)
	if _, _, err := NLL(logits, []int{0, 1, 4, 0, 0}, v, rowLoss); err == nil {
		t.Fatal("target 4 of a vocabulary of 4: want an error")
	}
}

// TestElementwiseAgainstLoops: Add, Mul, AddBias, FillRows, Scale, ColSum, Dot, Bilinear, Gather, GELU
// and ELU in float64 equal their defining loops, on sizes large enough to run on several goroutines.
func TestElementwiseAgainstLoops(t *testing.T) {
	const n, d = 300, 256 // 76800 elements: several chunks of ParallelFor
	a, b, bias := normals(8, n*d), normals(9, n*d), normals(10, d)
	sum, prod, biased := make([]float64, n*d), make([]float64, n*d), make([]float64, n*d)
	cols, gelu, elu := make([]float64, d), make([]float64, n*d), make([]float64, n*d)
	for i := range a {
		sum[i], prod[i], biased[i] = a[i]+b[i], a[i]*b[i], a[i]+bias[i%d]
		cols[i%d] += a[i]
		gelu[i] = ref.GELU(a[i])
		elu[i] = a[i]
		if a[i] <= 0 {
			elu[i] = math.Expm1(a[i])
		}
	}
	y := make([]float64, n*d)
	Add(y, a, b)
	assertNear(t, "add", y, sum, 0)
	Mul(y, a, b)
	assertNear(t, "mul", y, prod, 0)
	AddBias(y, a, bias)
	assertNear(t, "add bias", y, biased, 0)
	FillRows(y, bias)
	for r := range n {
		assertNear(t, "fill rows", y[r*d:(r+1)*d], bias, 0)
	}
	got := make([]float64, d)
	ColSum(got, a, &Workspace{})
	assertNear(t, "column sums", got, cols, 1e-12)
	GELU(y, a)
	assertNear(t, "gelu", y, gelu, 1e-15)
	ELU(y, a)
	assertNear(t, "elu", y, elu, 0)
	scaled := make([]float64, n*d)
	var ab float64
	for i := range a {
		scaled[i] = 1.5 * a[i]
		ab += a[i] * b[i]
	}
	Scale(y, a, 1.5)
	assertNear(t, "scale", y, scaled, 0)
	assertNear(t, "dot", []float64{Dot(a, b)}, []float64{ab}, 1e-10)
	var uwv float64 // u^T W v for W the first (n, d) of a, u = b[:n], v = bias
	for i := range n {
		for j := range d {
			uwv += b[i] * a[i*d+j] * bias[j]
		}
	}
	assertNear(t, "bilinear", []float64{Bilinear(a, b[:n], bias, d)}, []float64{uwv}, 1e-10)
	ids := []int{3, 0, 3, 1}
	rows := make([]float64, len(ids)*d)
	Gather(rows, a, ids, d)
	for r, id := range ids {
		assertNear(t, "gather", rows[r*d:(r+1)*d], a[id*d:(id+1)*d], 0)
	}
}

// TestGemvAndSquaredNormsAgainstLoops: Gemv, plain and transposed, and SquaredNorms on
// strided rows equal their defining sums in float64; SquaredNorms bit for bit, on a count
// of rows that is not a multiple of its four.
func TestGemvAndSquaredNormsAgainstLoops(t *testing.T) {
	const m, n, ld = 9, 6, 8 // a is (m, n) with row stride ld
	a, x, y0 := normals(11, m*ld), normals(12, m), normals(13, m)
	for _, trans := range []bool{false, true} {
		in, out := n, m // op(a) x: a (m, n) x (n)
		if trans {
			in, out = m, n
		}
		want := make([]float64, out)
		for i := range out {
			want[i] = 0.5 * y0[i]
			for j := range in {
				aij := a[i*ld+j]
				if trans {
					aij = a[j*ld+i]
				}
				want[i] += 2 * aij * x[j]
			}
		}
		y := append([]float64(nil), y0[:out]...)
		Gemv(trans, m, n, 2, a[:(m-1)*ld+n], ld, x[:in], 0.5, y)
		assertNear(t, "gemv", y, want, 1e-12)
	}
	norms, want := make([]float64, m), make([]float64, m)
	for i := range m {
		for _, v := range a[i*ld : i*ld+n] {
			want[i] += v * v
		}
	}
	SquaredNorms(norms, a, ld, n)
	assertNear(t, "squared norms", norms, want, 0)
}
