package lipschitz

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// identityHeads returns the H column blocks of the (D, D) identity.
func identityHeads(t *testing.T, dim, heads int) []*mat.Dense {
	id := mat.NewDense(dim, dim, nil)
	for k := range dim {
		id.Set(k, k, 1)
	}
	hs, err := HeadSlices(id, heads)
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

func TestL2MHABoundsIdentityWeights(t *testing.T) {
	// Identity blocks have every inf-norm and spectral norm equal to 1, so the
	// bounds reduce to their N- and d-dependent factors.
	for _, n := range []int{1, 2, 16, 100} {
		w := PhiInv(n)
		for _, c := range []struct{ dim, heads int }{{2, 1}, {2, 2}, {6, 3}} {
			d := float64(c.dim / c.heads)
			wq, wv := identityHeads(t, c.dim, c.heads), identityHeads(t, c.dim, c.heads)
			wo := identityHeads(t, c.dim, 1)[0]
			inf, err := L2MHABoundInf(n, wq, wv, wo)
			if err != nil {
				t.Fatal(err)
			}
			if want := 4*w + 1/math.Sqrt(d); math.Abs(inf-want) > 1e-14*want {
				t.Errorf("N=%d D=%d H=%d: inf bound %v, want %v", n, c.dim, c.heads, inf, want)
			}
			want := math.Sqrt(float64(n)/d) * (4*w + 1) * math.Sqrt(float64(c.heads))
			for name, bound := range map[string]func(int, []*mat.Dense, []*mat.Dense, *mat.Dense) (float64, error){
				"as stated": L2MHABound2AsStated, "corrected": L2MHABound2,
			} {
				two, err := bound(n, wq, wv, wo)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(two-want) > 1e-14*want {
					t.Errorf("N=%d D=%d H=%d: %s 2 bound %v, want %v", n, c.dim, c.heads, name, two, want)
				}
			}
		}
	}
}

// Scaling W^Q by a, W^V by b and W^O by c scales the Lipschitz constant of
// L2-MHA by a^2 |b c| (F(X) becomes a b c F(a X)). The inf-norm bound and the
// corrected 2-norm bound scale the same way; [K]'s 2-norm bound, transcribed
// literally, only by |a b c|.
func TestL2MHABoundsScaling(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	wq := []*mat.Dense{randDense(rng, 6, 3, 1), randDense(rng, 6, 3, 1)}
	wv := []*mat.Dense{randDense(rng, 6, 3, 1), randDense(rng, 6, 3, 1)}
	wo := randDense(rng, 6, 6, 1)
	var wo3 mat.Dense
	wo3.Scale(-3, wo)
	const a, b, c = -2, 0.5, -3
	for _, tc := range []struct {
		name   string
		bound  func(int, []*mat.Dense, []*mat.Dense, *mat.Dense) (float64, error)
		factor float64
	}{
		{"inf", L2MHABoundInf, a * a * math.Abs(b*c)},
		{"2 corrected", L2MHABound2, a * a * math.Abs(b*c)},
		{"2 as stated", L2MHABound2AsStated, math.Abs(a * b * c)},
	} {
		base, err := tc.bound(10, wq, wv, wo)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tc.bound(10, scaledHeads(wq, a), scaledHeads(wv, b), &wo3)
		if err != nil {
			t.Fatal(err)
		}
		if want := base * tc.factor; math.Abs(got-want) > 1e-13*want {
			t.Errorf("%s bound of scaled weights = %v, want %v x %v = %v", tc.name, got, tc.factor, base, want)
		}
	}
}

func TestL2MHABoundErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	good := []*mat.Dense{randDense(rng, 4, 2, 1), randDense(rng, 4, 2, 1)}
	wo := randDense(rng, 4, 4, 1)
	cases := map[string]struct {
		n      int
		wq, wv []*mat.Dense
		wo     *mat.Dense
	}{
		"n = 0":           {0, good, good, wo},
		"no heads":        {5, nil, nil, wo},
		"wv has 1 head":   {5, good, good[:1], wo},
		"wq[0] 4x3, H=2":  {5, []*mat.Dense{randDense(rng, 4, 3, 1), good[1]}, good, wo},
		"wv[1] 4x1":       {5, good, []*mat.Dense{good[0], randDense(rng, 4, 1, 1)}, wo},
		"wq[1] nil":       {5, []*mat.Dense{good[0], nil}, good, wo},
		"wo 4x2":          {5, good, good, randDense(rng, 4, 2, 1)},
		"wo nil":          {5, good, good, nil},
		"wq[0] nil first": {5, []*mat.Dense{nil, good[1]}, good, wo},
		"NaN in wo":       {5, good, good, mat.NewDense(4, 4, []float64{math.NaN(), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})},
	}
	for name, c := range cases {
		_, errInf := L2MHABoundInf(c.n, c.wq, c.wv, c.wo)
		_, err2 := L2MHABound2AsStated(c.n, c.wq, c.wv, c.wo)
		_, errC := L2MHABound2(c.n, c.wq, c.wv, c.wo)
		if errInf == nil || err2 == nil || errC == nil {
			t.Errorf("%s: want errors, got %v, %v and %v", name, errInf, err2, errC)
			continue
		}
		t.Logf("%s: %v", name, errInf)
	}
}

// With one token L2-MHA is linear, F(x) = x A W^V W^O; for D = H = 1 that is
// a^2 b c x, and the inf-norm and corrected 2-norm bounds equal |a^2 b c|.
func TestL2MHABoundsTightForOneToken(t *testing.T) {
	const a, b, c = -1.5, 0.7, 2.0
	w := l2Weights{
		wq: []*mat.Dense{mat.NewDense(1, 1, []float64{a})},
		wv: []*mat.Dense{mat.NewDense(1, 1, []float64{b})},
		wo: mat.NewDense(1, 1, []float64{c}),
	}
	j := mustJacobian(t, l2Map(t, 1, w, false), []float64{0.3}, 1e-3)
	lip := math.Abs(j.At(0, 0))
	if want := a * a * math.Abs(b*c); math.Abs(lip-want) > 1e-12 {
		t.Fatalf("measured slope %v, want a^2 |b c| = %v", lip, want)
	}
	bounds := boundsOf(t, 1, w)
	if math.Abs(bounds.inf-lip) > 1e-12 || math.Abs(bounds.corrected2-lip) > 1e-12 {
		t.Errorf("one token: inf bound %v, corrected 2 bound %v, want both %v", bounds.inf, bounds.corrected2, lip)
	}
}
