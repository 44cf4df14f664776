package train

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"lipformer/kernel"
)

// refMuon is an independent float64 transcription of Muon's update (Jordan et al. 2024,
// the reference implementation's zeropower_via_newtonschulz5 with Nesterov momentum) on
// gonum matrices.
type refMuon struct {
	m []*mat.Dense
}

func (r *refMuon) step(w, g []*mat.Dense, lr, wd float64) {
	for i := range w {
		rows, cols := g[i].Dims()
		if r.m[i] == nil {
			r.m[i] = mat.NewDense(rows, cols, nil)
		}
		r.m[i].Scale(0.95, r.m[i])
		r.m[i].Add(r.m[i], g[i])
		var u mat.Dense
		u.Scale(0.95, r.m[i])
		u.Add(&u, g[i])
		o := refZeroPower(&u)
		w[i].Scale(1-lr*wd, w[i])
		o.Scale(lr*math.Sqrt(math.Max(1, float64(cols)/float64(rows))), o) // W is (fan-in, fan-out)
		w[i].Sub(w[i], o)
	}
}

// refZeroPower is five Newton-Schulz steps on u / ||u||_F, on u^T when u is tall.
func refZeroPower(u mat.Matrix) *mat.Dense {
	rows, cols := u.Dims()
	x := mat.DenseCopyOf(u)
	if rows > cols {
		x = mat.DenseCopyOf(u.T())
	}
	x.Scale(1/(mat.Norm(x, 2)+1e-7), x) // gonum's matrix 2-norm is Frobenius's
	for range 5 {
		var a, b, bx mat.Dense
		a.Mul(x, x.T())
		b.Mul(&a, &a)
		b.Scale(2.0315, &b)
		a.Scale(-4.7750, &a)
		b.Add(&b, &a)
		bx.Mul(&b, x)
		x.Scale(3.4445, x)
		x.Add(x, &bx)
	}
	if rows > cols {
		return mat.DenseCopyOf(x.T())
	}
	return x
}

// muonParams returns a wide matrix, a tall one, a square one and a vector, with random
// values, the vector left to Adam.
func muonParams[T Float](rng *rand.Rand) []Param[T] {
	shapes := [][2]int{{5, 9}, {11, 4}, {6, 6}, {7, 0}}
	var ps []Param[T]
	for i, s := range shapes {
		n := s[0] * max(s[1], 1)
		p := Param[T]{Name: []string{"wide", "tall", "square", "bias"}[i], Value: make([]T, n), Grad: make([]T, n), Decay: s[1] > 0}
		if s[1] > 0 {
			p.Rows, p.Cols = s[0], s[1]
		}
		for j := range p.Value {
			p.Value[j] = T(0.3 * rng.NormFloat64())
		}
		ps = append(ps, p)
	}
	return ps
}

func denseOf[T Float](rows, cols int, v []T) *mat.Dense {
	d := mat.NewDense(rows, cols, nil)
	for i := range rows {
		for j := range cols {
			d.Set(i, j, float64(v[i*cols+j]))
		}
	}
	return d
}

// checkMuonMatchesReference runs four steps of Adam with Muon on muonParams against
// refMuon for the matrices and refAdam for the vector.
func checkMuonMatchesReference[T Float](t *testing.T, tol float64) {
	rng := rand.New(rand.NewPCG(3, 4))
	cfg := AdamConfig{Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, WeightDecay: 0.1, Muon: 5}
	ps := muonParams[T](rng)
	opt, err := NewAdam(ps, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var w []*mat.Dense
	for _, p := range ps[:3] {
		w = append(w, denseOf(p.Rows, p.Cols, p.Value))
	}
	vec := [][]float64{make([]float64, len(ps[3].Value))}
	for j, v := range ps[3].Value {
		vec[0][j] = float64(v)
	}
	ref, adam := &refMuon{m: make([]*mat.Dense, 3)}, newRefAdam(cfg, []int{len(vec[0])})
	const lr = 2e-3
	for step := range 4 {
		grads := fillGrads(rng, ps)
		var g []*mat.Dense
		for i, p := range ps[:3] {
			g = append(g, mat.NewDense(p.Rows, p.Cols, grads[i]))
		}
		if err := opt.Step(lr); err != nil {
			t.Fatal(err)
		}
		ref.step(w, g, lr*cfg.Muon, cfg.WeightDecay)
		adam.step(vec, grads[3:], []bool{false}, lr)
		for i, p := range ps[:3] {
			if d := diffBound(denseOf(p.Rows, p.Cols, p.Value), w[i]); d > tol {
				t.Fatalf("step %d: %s (%d x %d) is %.3g from the reference Muon step", step+1, p.Name, p.Rows, p.Cols, d)
			}
		}
		for j, v := range ps[3].Value {
			if d := math.Abs(float64(v) - vec[0][j]); d > tol {
				t.Fatalf("step %d: the vector, which Adam updates, is %.3g from the reference Adam", step+1, d)
			}
		}
	}
}

// diffBound bounds every entry of a - b by its largest absolute row sum.
func diffBound(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, math.Inf(1))
}

func TestMuonMatchesReference(t *testing.T) {
	t.Run("float64", func(t *testing.T) { checkMuonMatchesReference[float64](t, 1e-12) })
	t.Run("float32", func(t *testing.T) { checkMuonMatchesReference[float32](t, 2e-5) })
}

// TestNewtonSchulzOrthogonalises checks what Muon relies on: five steps take the singular
// values of a matrix spread over two decades into [0.68, 1.22], keeping its singular
// vectors.
func TestNewtonSchulzOrthogonalises(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const r, c = 12, 20
	u, v := randomOrthogonal(rng, r), randomOrthogonal(rng, c)
	s := mat.NewDense(r, c, nil)
	for i := range r {
		s.Set(i, i, math.Pow(10, -2*float64(i)/float64(r-1)))
	}
	var x mat.Dense
	x.Product(u, s, v.T())
	var sc muonScratch[float64]
	sc.grow(r, c)
	copy(sc.x, x.RawMatrix().Data)
	kernel.Scale(sc.x, sc.x, 1/mat.Norm(&x, 2))
	newtonSchulz(&sc, r, c)
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(r, c, sc.x), mat.SVDThin) {
		t.Fatal("SVD failed")
	}
	for i, sv := range svd.Values(nil) {
		if !(sv > 0.68 && sv < 1.22) {
			t.Fatalf("singular value %d after Newton-Schulz is %.4g, want in [0.68, 1.22]", i, sv)
		}
	}
	// The singular vectors are kept: U^T X V is diagonal.
	var d mat.Dense
	d.Product(u.T(), mat.NewDense(r, c, sc.x), v)
	for i := range r {
		for j := range c {
			if i != j && math.Abs(d.At(i, j)) > 1e-9 {
				t.Fatalf("U^T X V has (%d, %d) = %.3g: the singular vectors moved", i, j, d.At(i, j))
			}
		}
	}
}

// randomOrthogonal is the Q of a random n x n Gaussian matrix.
func randomOrthogonal(rng *rand.Rand, n int) *mat.Dense {
	a := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	var q mat.Dense
	qr.QTo(&q)
	return &q
}

// TestMuonDoesNotDependOnTheCores: the matrices are updated several at once, each on one
// goroutine, so one core and four give the same bits.
func TestMuonDoesNotDependOnTheCores(t *testing.T) {
	run := func(procs int) []Param[float32] {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		rng := rand.New(rand.NewPCG(9, 10))
		ps := muonParams[float32](rng)
		trained(t, rng, ps, AdamConfig{Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, Muon: 10}, 3, 1e-3)
		return ps
	}
	if !sameValues(run(1), run(4)) {
		t.Fatal("Muon's update on four cores differs from one core's")
	}
}

func TestAdamRejectsBadMuonSettings(t *testing.T) {
	p := Param[float64]{Name: "w", Value: make([]float64, 6), Grad: make([]float64, 6), Rows: 2, Cols: 4}
	if _, err := NewAdam([]Param[float64]{p}, AdamConfig{Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, Muon: 1}); err == nil || !strings.Contains(err.Error(), "not a 2 x 4 matrix") {
		t.Fatalf("a 2 x 4 matrix of 6 values: error %v", err)
	}
	p.Cols = 3
	if _, err := NewAdam([]Param[float64]{p}, AdamConfig{Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, Muon: -1}); err == nil || !strings.Contains(err.Error(), "Muon") {
		t.Fatalf("Muon scale -1: error %v", err)
	}
}
