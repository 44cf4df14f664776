package ngram

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// goldenMin returns the minimum of a convex f on [lo, hi] by golden-section search.
func goldenMin(f func(float64) float64, lo, hi float64) float64 {
	r := (math.Sqrt(5) - 1) / 2
	for range 200 {
		a, b := hi-r*(hi-lo), lo+r*(hi-lo)
		if f(a) < f(b) {
			hi = b
		} else {
			lo = a
		}
	}
	return f((lo + hi) / 2)
}

func softplus(x float64) float64 { return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }

// TestFloorOfTwoBytes: with two bytes the logits matter only through z1 - z2, which an
// offset of norm rho moves by at most rho sqrt 2 either way from the centre's delta, so the
// floor is min over delta of f softplus(-(delta + rho sqrt 2)) + (1-f) softplus(delta -
// rho sqrt 2), a one-dimensional convex minimum found here by golden section.
func TestFloorOfTwoBytes(t *testing.T) {
	for _, c := range []struct {
		a, b int // counts of 'a' and 'b'
		rho  float64
	}{{3, 1, 0}, {3, 1, 0.5}, {9, 1, 1}, {1, 1, 2}, {50, 3, 3}} {
		targets := []byte(strings.Repeat("a", c.a) + strings.Repeat("b", c.b))
		got, err := Floor([][]byte{targets}, []byte("ab"), c.rho)
		if err != nil {
			t.Fatal(err)
		}
		f := float64(c.a) / float64(c.a+c.b)
		s := c.rho * math.Sqrt2
		want := goldenMin(func(d float64) float64 {
			return f*softplus(-(d+s)) + (1-f)*softplus(d-s)
		}, -50, 50) / math.Ln2
		if math.Abs(got-want) > 1e-5 {
			t.Errorf("counts %d, %d, rho %g: floor %.8f bits, want %.8f", c.a, c.b, c.rho, got, want)
		}
	}
}

// TestFloorAtRadiusZeroIsTheEntropy: with every logit at one point a group is predicted by
// one distribution, at best its own frequencies, so the floor is the groups' mean entropy;
// and it falls as the radius grows.
func TestFloorAtRadiusZeroIsTheEntropy(t *testing.T) {
	groups := [][]byte{[]byte("aaabbc"), []byte("abcabcab"), []byte("cccccb")}
	var want float64
	n := 0
	for _, g := range groups {
		count := map[byte]float64{}
		for _, b := range g {
			count[b]++
		}
		for _, c := range count {
			want -= c * math.Log2(c/float64(len(g)))
		}
		n += len(g)
	}
	want /= float64(n)
	got, err := Floor(groups, []byte("abc"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-want) > 1e-6 {
		t.Errorf("floor at radius 0 %.8f bits, want the mean entropy %.8f", got, want)
	}
	prev := got
	for _, rho := range []float64{0.5, 1, 2, 4} {
		f, err := Floor(groups, []byte("abc"), rho)
		if err != nil {
			t.Fatal(err)
		}
		if !(f < prev) {
			t.Errorf("floor at radius %g is %.6f, not below %.6f at the radius before", rho, f, prev)
		}
		prev = f
	}
}

// TestFloorIsBelowEveryBoundedModel: a bounded model's logits lie within rho of one point
// for every context, so its score on a text is that of a predictor the floor of one group
// of the text's targets covers. It must never score below the floor, on its own training
// text (where it fits best) or another.
func TestFloorIsBelowEveryBoundedModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	text := randomText(rng, 3000, "abcde ")
	other := randomText(rng, 1000, "abcde ")
	for _, rho := range []float64{0.5, 2, 6} {
		for _, order := range []int{1, 2, 4} {
			m, err := TrainBounded(text, order, []byte("abcde "), rho)
			if err != nil {
				t.Fatal(err)
			}
			for _, eval := range [][]byte{text, other} {
				bpc, err := m.BPC(eval)
				if err != nil {
					t.Fatal(err)
				}
				floor, err := Floor([][]byte{eval[1:]}, []byte("abcde "), rho)
				if err != nil {
					t.Fatal(err)
				}
				if bpc < floor-1e-9 {
					t.Errorf("radius %g, order %d: the bounded model scores %.6f bits, below the floor %.6f", rho, order, bpc, floor)
				}
			}
		}
	}
}

// randomText is n bytes of alphabet from a random first-order chain, so that contexts
// predict something.
func randomText(rng *rand.Rand, n int, alphabet string) []byte {
	next := make([][]float64, len(alphabet))
	for i := range next {
		next[i] = make([]float64, len(alphabet))
		for j := range next[i] {
			next[i][j] = math.Pow(rng.Float64(), 3)
		}
	}
	text := make([]byte, n)
	prev := 0
	for i := range text {
		var sum float64
		for _, p := range next[prev] {
			sum += p
		}
		u := rng.Float64() * sum
		j := 0
		for ; j < len(alphabet)-1 && u > next[prev][j]; j++ {
			u -= next[prev][j]
		}
		text[i], prev = alphabet[j], j
	}
	return text
}

// TestBoundedAtRadiusZeroIsTheUnigram: a unigram model at radius 0 has one logit vector,
// the train text's log frequencies, so it scores the cross-entropy of the evaluated text
// under them.
func TestBoundedAtRadiusZeroIsTheUnigram(t *testing.T) {
	train, eval := []byte("aabacabcaaab"), []byte("cabba")
	m, err := TrainBounded(train, 1, []byte("abc"), 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.BPC(eval)
	if err != nil {
		t.Fatal(err)
	}
	p := map[byte]float64{'a': 7.0 / 12, 'b': 3.0 / 12, 'c': 2.0 / 12}
	var want float64
	for _, b := range eval[1:] {
		want -= math.Log2(p[b])
	}
	want /= float64(len(eval) - 1)
	if math.Abs(got-want) > 1e-5 {
		t.Errorf("unigram at radius 0 scores %.8f bits, want %.8f", got, want)
	}
}

// TestFitBallIsTheMinimum: no feasible point near the fit has a lower loss (random moves
// of the centre and of each offset, the offsets projected back into the ball), and the fit
// at the default tolerance is within 1e-5 bits of one solved to 1e-10.
func TestFitBallIsTheMinimum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rows := func() [][]float64 {
		r := rand.New(rand.NewPCG(5, 6))
		rows := make([][]float64, 12)
		for h := range rows {
			rows[h] = make([]float64, 7)
			for j := range rows[h] {
				rows[h][j] = math.Floor(10 * math.Pow(r.Float64(), 4))
			}
		}
		return rows
	}
	const rho = 1.5
	fit, err := fitBall(rows(), rho, ballTol)
	if err != nil {
		t.Fatal(err)
	}
	exact, err := fitBall(rows(), rho, 1e-10)
	if err != nil {
		t.Fatal(err)
	}
	if d := (fit.loss - exact.loss) / math.Ln2; d > 1e-5 || d < -1e-9 {
		t.Errorf("loss at the default tolerance is %.3g bits from the one at 1e-10", d)
	}
	for h, v := range exact.offsets {
		if n := norm(v); n > rho*(1+1e-12) {
			t.Errorf("offset %d has norm %g, outside the radius %g", h, n, rho)
		}
	}
	r := rows()
	loss := func(c []float64, v [][]float64) float64 {
		var sum, n float64
		z := make([]float64, len(c))
		for h := range r {
			for j := range z {
				z[j] = c[j] + v[h][j]
			}
			lse := logSumExp(z)
			for j, k := range r[h] {
				sum += k * (lse - z[j])
				n += k
			}
		}
		return sum / n
	}
	base := loss(exact.center, exact.offsets)
	if math.Abs(base-exact.loss) > 1e-12 {
		t.Fatalf("the fit's loss %.15g differs from the loss of its point %.15g", exact.loss, base)
	}
	for range 200 {
		eps := 1e-3 * rng.Float64()
		c := append([]float64(nil), exact.center...)
		for j := range c {
			c[j] += eps * rng.NormFloat64()
		}
		v := make([][]float64, len(exact.offsets))
		for h := range v {
			v[h] = append([]float64(nil), exact.offsets[h]...)
			for j := range v[h] {
				v[h][j] += eps * rng.NormFloat64()
			}
			projectBall(v[h], rho)
		}
		if l := loss(c, v); l < base-1e-12 {
			t.Fatalf("a feasible point %.2g away scores %.15g, below the fit's %.15g", eps, l, base)
		}
	}
}

func norm(v []float64) float64 {
	var s float64
	for _, a := range v {
		s += a * a
	}
	return math.Sqrt(s)
}

// TestBoundedErrors: bad orders, radii, vocabularies and texts are errors that name them.
func TestBoundedErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		err  func() error
		want string
	}{
		{"order 0", func() error { _, err := TrainBounded([]byte("ab"), 0, []byte("ab"), 1); return err }, "order 0"},
		{"order 9", func() error { _, err := TrainBounded([]byte("ab"), 9, []byte("ab"), 1); return err }, "order 9"},
		{"negative radius", func() error { _, err := TrainBounded([]byte("ab"), 2, []byte("ab"), -1); return err }, "radius -1"},
		{"infinite radius", func() error { _, err := Floor([][]byte{[]byte("ab")}, []byte("ab"), math.Inf(1)); return err }, "radius +Inf"},
		{"byte outside", func() error { _, err := TrainBounded([]byte("abz"), 2, []byte("ab"), 1); return err }, "0x7a 'z' at offset 2"},
		{"repeated byte", func() error { _, err := Floor([][]byte{[]byte("ab")}, []byte("aba"), 1); return err }, "appears twice"},
		{"target outside", func() error { _, err := Floor([][]byte{[]byte("ab"), []byte("q")}, []byte("ab"), 1); return err }, "group 1"},
		{"no targets", func() error { _, err := Floor([][]byte{nil}, []byte("ab"), 1); return err }, "no targets"},
		{"short eval", func() error {
			m, err := TrainBounded([]byte("abab"), 2, []byte("ab"), 1)
			if err != nil {
				return err
			}
			_, err = m.BPC([]byte("a"))
			return err
		}, "at least 2"},
	} {
		err := c.err()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestBumpMapRealisesABoundedModel checks the construction of docs/math.md ("What a radius
// certainly allows"): with token vectors at least delta apart and logit vectors z(X)
// within r = K delta / 2 of c, one for each window X, the map F(Y) = c + sum_X
// max(0, 1 - 2 ||Y - X||_tok / delta) (z(X) - c) equals z on every window and is
// K-Lipschitz in the token norm: over random pairs of points near windows, on segments
// between them and at random, no ratio exceeds K. Three tokens on a regular simplex in the
// unit ball of the plane (delta = sqrt 3), windows of 2.
func TestBumpMapRealisesABoundedModel(t *testing.T) {
	const k, T, D, V = 2.0, 2, 2, 4
	rng := rand.New(rand.NewPCG(9, 10))
	tokens := [][]float64{{1, 0}, {-0.5, math.Sqrt(3) / 2}, {-0.5, -math.Sqrt(3) / 2}}
	delta := math.Sqrt(3)
	r := k * delta / 2
	c := []float64{0.3, -0.2, 0.1, 0.5}
	var windows [][]float64 // (T*D) each
	var logits [][]float64  // (V) each, within r of c
	for a := range tokens {
		for b := range tokens {
			windows = append(windows, append(append([]float64(nil), tokens[a]...), tokens[b]...))
			v := make([]float64, V)
			for j := range v {
				v[j] = rng.NormFloat64()
			}
			s := r * math.Pow(rng.Float64(), 0.2) / norm(v) // mostly near the sphere
			z := make([]float64, V)
			for j := range z {
				z[j] = c[j] + s*v[j]
			}
			logits = append(logits, z)
		}
	}
	tok := func(x, y []float64) float64 { // the token norm of x - y
		var m float64
		for i := 0; i < T; i++ {
			var s float64
			for j := 0; j < D; j++ {
				d := x[i*D+j] - y[i*D+j]
				s += d * d
			}
			m = math.Max(m, math.Sqrt(s))
		}
		return m
	}
	f := func(y []float64) []float64 {
		out := append([]float64(nil), c...)
		for w, x := range windows {
			if phi := 1 - 2*tok(y, x)/delta; phi > 0 {
				for j := range out {
					out[j] += phi * (logits[w][j] - c[j])
				}
			}
		}
		return out
	}
	dist := func(a, b []float64) float64 {
		var s float64
		for j := range a {
			s += (a[j] - b[j]) * (a[j] - b[j])
		}
		return math.Sqrt(s)
	}
	for w, x := range windows {
		if d := dist(f(x), logits[w]); d > 1e-12 {
			t.Errorf("window %d: F is %g away from its logits", w, d)
		}
	}
	near := func() []float64 { // a point in or near a random window's bump
		x := windows[rng.IntN(len(windows))]
		y := make([]float64, T*D)
		for i := range y {
			y[i] = x[i] + rng.NormFloat64()*delta*0.3*rng.Float64()
		}
		return y
	}
	worst := 0.0
	for range 20000 {
		y1, y2 := near(), near()
		if rng.IntN(3) == 0 { // a close pair on the segment from y1 to y2
			s := rng.Float64()
			for i := range y2 {
				y2[i] = y1[i] + s*(y2[i]-y1[i])*0.05
			}
		}
		if d := tok(y1, y2); d > 0 {
			worst = math.Max(worst, dist(f(y1), f(y2))/d)
		}
	}
	if worst > k*(1+1e-9) {
		t.Errorf("largest ratio %.6f, above K = %g", worst, k)
	}
	if worst < 0.5*k {
		t.Errorf("largest ratio %.6f: the search never came near K = %g", worst, k)
	}
	t.Logf("largest ratio %.4f of K = %g", worst, k)
}

// TestFitBallIsTheSameOnAnyCores: the fit of several hundred rows (enough blocks for
// kernel.Workers to use every core) is bit for bit the same on 1 and 4 cores.
func TestFitBallIsTheSameOnAnyCores(t *testing.T) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz"
	rng := rand.New(rand.NewPCG(11, 12))
	text := randomText(rng, 50000, alphabet)
	fit := func(procs int) *ballFit {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		m, err := TrainBounded(text, 3, []byte(alphabet), 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.fit.offsets) < 8*ballBlock {
			t.Fatalf("%d rows, want at least %d", len(m.fit.offsets), 8*ballBlock)
		}
		return m.fit
	}
	a, b := fit(1), fit(4)
	if a.loss != b.loss || a.iters != b.iters || !slices.Equal(a.center, b.center) {
		t.Errorf("1 core: loss %.17g after %d steps; 4 cores: %.17g after %d, or another centre", a.loss, a.iters, b.loss, b.iters)
	}
	for h := range a.offsets {
		if !slices.Equal(a.offsets[h], b.offsets[h]) {
			t.Fatalf("row %d differs between 1 and 4 cores", h)
		}
	}
}
