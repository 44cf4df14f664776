package expressive

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestTargetLogitsHand(t *testing.T) {
	const eps, margin = 0.1, 0.5
	b, err := TargetLogits(handTarget(), eps, margin)
	if err != nil {
		t.Fatal(err)
	}
	delta := math.Log(10) + margin
	want := [][]float64{
		{delta, 0, math.Log(2) + delta},
		{0, delta, 0},
		{delta, math.Log(2) + delta, math.Log(4) + delta},
	}
	for i := range 3 {
		for j := range 3 {
			if math.Abs(b.At(i, j)-want[i][j]) > 1e-14 {
				t.Fatalf("B[%d][%d] = %v, want %v", i, j, b.At(i, j), want[i][j])
			}
		}
	}
	// B itself, used as logits, realises the target at precision eps with room margin.
	p, err := MeasureLogits(b, handTarget())
	if err != nil {
		t.Fatal(err)
	}
	if p.LogRatio > 1e-14 || math.Abs(p.LogLeak-(-delta)) > 1e-14 {
		t.Fatalf("B as logits: LogRatio %v LogLeak %v, want 0 and %v", p.LogRatio, p.LogLeak, -delta)
	}
}

// The input X = [B G, G] through the module W_Q = [I; 0], W_K = [0; I] gives exactly
// B G G^T, and so does the trial set's fast path B (G G^T).
func TestJLInputReproducesBGGt(t *testing.T) {
	const L, d = 40, 12
	tg, err := RandomTarget(L, 3, 100, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := TargetLogits(tg, 0.1, DefaultMargin)
	if err != nil {
		t.Fatal(err)
	}
	g, err := JLMatrix(L, d, 11)
	if err != nil {
		t.Fatal(err)
	}
	// Reference: a plain triple loop for B G G^T.
	ref := mat.NewDense(L, L, nil)
	for i := range L {
		for j := range L {
			var s float64
			for l := range L {
				var gg float64
				for a := range d {
					gg += g.At(l, a) * g.At(j, a)
				}
				s += b.At(i, l) * gg
			}
			ref.Set(i, j, s)
		}
	}
	x, err := JLInput(b, g)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := x.Dims(); r != L || c != 2*d {
		t.Fatalf("X is %d x %d, want %d x %d", r, c, L, 2*d)
	}
	mod, err := JLModule(d)
	if err != nil {
		t.Fatal(err)
	}
	z, err := mod.Logits(x)
	if err != nil {
		t.Fatal(err)
	}
	gram, err := NewGram(L, 11)
	if err != nil {
		t.Fatal(err)
	}
	gg, err := gram.At(d)
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewJLSet(gg, 0.1, DefaultMargin)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := set.Logits(tg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range L {
		for j := range L {
			if e := math.Abs(z.At(i, j) - ref.At(i, j)); e > 1e-9 {
				t.Fatalf("module logits (%d, %d) = %v, B G G^T = %v", i, j, z.At(i, j), ref.At(i, j))
			}
			if e := math.Abs(fast.At(i, j) - ref.At(i, j)); e > 1e-9 {
				t.Fatalf("fast logits (%d, %d) = %v, B G G^T = %v", i, j, fast.At(i, j), ref.At(i, j))
			}
		}
	}
	// The attention matrix is the max-shifted row softmax of those logits.
	att, err := mod.Attention(x)
	if err != nil {
		t.Fatal(err)
	}
	for i := range L {
		var sum float64
		for j := range L {
			sum += att.At(i, j)
			lr := math.Log(att.At(i, j)) - math.Log(att.At(i, 0))
			if math.Abs(lr-(z.At(i, j)-z.At(i, 0))) > 1e-9 {
				t.Fatalf("attention (%d, %d) is not the softmax of the logits", i, j)
			}
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Fatalf("attention row %d sums to %v", i, sum)
		}
	}
}

func TestJLMatrixNestedAndScaled(t *testing.T) {
	g4, _ := JLMatrix(50, 4, 3)
	g9, _ := JLMatrix(50, 9, 3)
	for i := range 50 {
		for c := range 4 {
			if math.Abs(g4.At(i, c)*2-g9.At(i, c)*3) > 1e-14 {
				t.Fatalf("G columns are not nested across d")
			}
		}
	}
	// Entries N(0, 1/d): E[G G^T] = I. With d = 4000 the diagonal is 1 +- 5 sqrt(2/d).
	const L, d = 20, 4000
	g, _ := JLMatrix(L, d, 8)
	gram := mat.NewDense(L, L, nil)
	gram.Mul(g, g.T())
	tol := 5 * math.Sqrt(2.0/d)
	for i := range L {
		for j := range L {
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(gram.At(i, j)-want) > tol {
				t.Fatalf("(G G^T)[%d][%d] = %v, want %v +- %v", i, j, gram.At(i, j), want, tol)
			}
		}
	}
}

// jlRate realises trials random targets with one G of width d and counts successes.
func jlRate(t *testing.T, L, k, d, trials int, eps float64) int {
	t.Helper()
	gram, err := NewGram(L, 21)
	if err != nil {
		t.Fatal(err)
	}
	gg, err := gram.At(d)
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewJLSet(gg, eps, DefaultMargin)
	if err != nil {
		t.Fatal(err)
	}
	ok := 0
	for n := range trials {
		tg, err := RandomTarget(L, k, 10, rand.New(rand.NewPCG(uint64(n), 77)))
		if err != nil {
			t.Fatal(err)
		}
		p, _, err := set.Try(tg)
		if err != nil {
			t.Fatal(err)
		}
		if p.Success(eps) {
			ok++
		}
	}
	return ok
}

func TestJLSucceedsAtLargeDFailsAtOne(t *testing.T) {
	const L, k, trials, eps = 64, 2, 20, 0.1
	if ok := jlRate(t, L, k, 1<<17, trials, eps); ok < trials-1 {
		t.Errorf("d = 2^17: %d/%d successes, want >= %d", ok, trials, trials-1)
	}
	if ok := jlRate(t, L, k, 1, trials, eps); ok != 0 {
		t.Errorf("d = 1: %d/%d successes, want 0", ok, trials)
	}
}

func TestJLErrors(t *testing.T) {
	if _, err := TargetLogits(handTarget(), 0, 1); err == nil {
		t.Error("eps = 0 gave no error")
	}
	if _, err := TargetLogits(handTarget(), 0.1, -1); err == nil {
		t.Error("negative margin gave no error")
	}
	if _, err := JLMatrix(0, 3, 1); err == nil {
		t.Error("L = 0 gave no error")
	}
	if _, err := JLModule(0); err == nil {
		t.Error("d = 0 gave no error")
	}
	if _, err := JLInput(mat.NewDense(3, 2, nil), mat.NewDense(3, 2, nil)); err == nil {
		t.Error("non-square B gave no error")
	}
	mod, _ := JLModule(2)
	if _, err := mod.Logits(mat.NewDense(3, 3, nil)); err == nil {
		t.Error("input of the wrong width gave no error")
	}
	gram, _ := NewGram(5, 1)
	gg, _ := gram.At(2)
	set, _ := NewJLSet(gg, 0.1, 1)
	if _, _, err := set.Try(handTarget()); err == nil {
		t.Error("target of the wrong L gave no error")
	}
}

// Gram.At, asked for widths in any order (across block boundaries, reusing kept partial
// sums), equals G G^T of the materialised JLMatrix.
func TestGramMatchesJLMatrix(t *testing.T) {
	const L = 9
	gram, err := NewGram(L, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []int{300, 5, 600, 257, 256, 1, 700, 650, 660} {
		got, err := gram.At(d)
		if err != nil {
			t.Fatal(err)
		}
		g, _ := JLMatrix(L, d, 4)
		want := mat.NewDense(L, L, nil)
		want.Mul(g, g.T())
		if !mat.EqualApprox(got, want, 1e-12) {
			t.Fatalf("d = %d: Gram.At differs from G G^T", d)
		}
	}
	if _, err := gram.At(0); err == nil {
		t.Error("d = 0 gave no error")
	}
}
