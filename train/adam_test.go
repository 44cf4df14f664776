package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"lipformer/kernel"
)

// refAdam is an independent float64 transcription of Adam (Kingma & Ba,
// Algorithm 1) with decoupled weight decay (Loshchilov & Hutter, as in
// torch.optim.AdamW: the decay uses the parameter before the step).
type refAdam struct {
	beta1, beta2, eps, wd float64
	t                     int
	m, v                  [][]float64
	mAbs                  [][]float64 // m computed from |g|: the scale of m's rounding error
}

func newRefAdam(cfg AdamConfig, sizes []int) *refAdam {
	r := &refAdam{beta1: cfg.Beta1, beta2: cfg.Beta2, eps: cfg.Eps, wd: cfg.WeightDecay}
	for _, n := range sizes {
		r.m = append(r.m, make([]float64, n))
		r.v = append(r.v, make([]float64, n))
		r.mAbs = append(r.mAbs, make([]float64, n))
	}
	return r
}

func (r *refAdam) step(params, grads [][]float64, decay []bool, lr float64) {
	r.t++
	for i := range params {
		for j, g := range grads[i] {
			p := params[i][j]
			if decay[i] {
				p -= lr * r.wd * params[i][j]
			}
			r.m[i][j] = r.beta1*r.m[i][j] + (1-r.beta1)*g
			r.v[i][j] = r.beta2*r.v[i][j] + (1-r.beta2)*g*g
			r.mAbs[i][j] = r.beta1*r.mAbs[i][j] + (1-r.beta1)*math.Abs(g)
			mHat := r.m[i][j] / (1 - math.Pow(r.beta1, float64(r.t)))
			vHat := r.v[i][j] / (1 - math.Pow(r.beta2, float64(r.t)))
			params[i][j] = p - lr*mHat/(math.Sqrt(vHat)+r.eps)
		}
	}
}

// testParams returns three parameters of different sizes with random values
// in [-1, 1), the middle one not decayed, and the float64 copies of their
// values.
func testParams[T Float](rng *rand.Rand) ([]Param[T], [][]float64, []bool) {
	sizes := []int{7, 3, 12}
	decay := []bool{true, false, true}
	var params []Param[T]
	var ref [][]float64
	for i, n := range sizes {
		p := Param[T]{Name: []string{"w", "gain", "proj"}[i], Value: make([]T, n), Grad: make([]T, n), Decay: decay[i]}
		r := make([]float64, n)
		for j := range p.Value {
			p.Value[j] = T(2*rng.Float64() - 1)
			r[j] = float64(p.Value[j])
		}
		params = append(params, p)
		ref = append(ref, r)
	}
	return params, ref, decay
}

// fillGrads writes random gradients of mixed scales into params and returns
// their exact float64 values.
func fillGrads[T Float](rng *rand.Rand, params []Param[T]) [][]float64 {
	var grads [][]float64
	for _, p := range params {
		g := make([]float64, len(p.Grad))
		for j := range p.Grad {
			p.Grad[j] = T(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(4)-3)))
			g[j] = float64(p.Grad[j])
		}
		grads = append(grads, g)
	}
	return grads
}

// stateByName returns the optimizer's exported state tensors by name.
func stateByName[T Float](a *Adam[T]) map[string][]T {
	tensors, _ := a.State()
	out := map[string][]T{}
	for _, t := range tensors {
		out[t.Name] = t.Data.([]T)
	}
	return out
}

// checkAgainstReference runs Adam[T] and the reference side by side and
// compares after every step, within tol times each quantity's scale: values
// at scale max(1, |p|), m at the scale of its terms (m cancels), v relative.
func checkAgainstReference[T Float](t *testing.T, cfg AdamConfig, tol float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	params, ref, decay := testParams[T](rng)
	a, err := NewAdam(params, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := newRefAdam(cfg, []int{7, 3, 12})
	for step, lr := range []float64{1e-2, 3e-2, 2e-2, 1e-2, 5e-3, 1e-3} {
		grads := fillGrads(rng, params)
		if err := a.Step(lr); err != nil {
			t.Fatal(err)
		}
		r.step(ref, grads, decay, lr)
		state := stateByName[T](a)
		for i, p := range params {
			m, v := state[AdamFirstMomentPrefix+p.Name], state[AdamSecondMomentPrefix+p.Name]
			for j := range p.Value {
				for _, c := range []struct {
					what             string
					got, want, scale float64
				}{
					{"value", float64(p.Value[j]), ref[i][j], math.Max(1, math.Abs(ref[i][j]))},
					{"m", float64(m[j]), r.m[i][j], r.mAbs[i][j]},
					{"v", float64(v[j]), r.v[i][j], r.v[i][j]},
				} {
					if math.Abs(c.got-c.want) > tol*c.scale {
						t.Fatalf("step %d, %s[%d] %s = %.17g, reference %.17g", step+1, p.Name, j, c.what, c.got, c.want)
					}
				}
			}
		}
	}
}

func TestAdamMatchesReference(t *testing.T) {
	adamW := AdamConfig{Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, WeightDecay: 0.1}
	// Tolerances: some tens of unit roundoffs of T over six steps.
	t.Run("float64 Adam", func(t *testing.T) { checkAgainstReference[float64](t, DefaultAdamConfig(), 1e-14) })
	t.Run("float64 AdamW", func(t *testing.T) { checkAgainstReference[float64](t, adamW, 1e-14) })
	t.Run("float32 AdamW", func(t *testing.T) { checkAgainstReference[float32](t, adamW, 1e-6) })
}

func TestAdamFirstStepIsSignStep(t *testing.T) {
	// With bias correction the first update is lr*g/(|g|+Eps): every
	// parameter moves by almost exactly lr against its gradient.
	lr, eps := 1e-3, 1e-8
	p := Param[float64]{Name: "x", Value: []float64{0.5, -1, 2}, Grad: []float64{3e-4, -20, 0.7}}
	before := append([]float64(nil), p.Value...)
	a, err := NewAdam([]Param[float64]{p}, AdamConfig{Beta1: 0.9, Beta2: 0.999, Eps: eps})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Step(lr); err != nil {
		t.Fatal(err)
	}
	for j, g := range p.Grad {
		want := before[j] - lr*g/(math.Abs(g)+eps)
		if math.Abs(p.Value[j]-want) > 1e-15 {
			t.Errorf("x[%d] = %.17g after one step, want %.17g", j, p.Value[j], want)
		}
	}
}

func TestAdamStepDoesNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	p32, _, _ := testParams[float32](rng)
	p64, _, _ := testParams[float64](rng)
	fillGrads(rng, p32)
	fillGrads(rng, p64)
	a32, err := NewAdam(p32, DefaultAdamConfig())
	if err != nil {
		t.Fatal(err)
	}
	a64, err := NewAdam(p64, DefaultAdamConfig())
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = a32.Step(1e-3) }); n != 0 {
		t.Errorf("Adam[float32].Step allocates %v times per step", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = a64.Step(1e-3) }); n != 0 {
		t.Errorf("Adam[float64].Step allocates %v times per step", n)
	}
}

func TestNewAdamRejectsBadInput(t *testing.T) {
	ok := func(name string) Param[float32] {
		return Param[float32]{Name: name, Value: make([]float32, 2), Grad: make([]float32, 2)}
	}
	def := DefaultAdamConfig()
	withCfg := func(f func(*AdamConfig)) AdamConfig { c := def; f(&c); return c }
	tests := []struct {
		name   string
		params []Param[float32]
		cfg    AdamConfig
		want   string
	}{
		{"no parameters", nil, def, "no parameters"},
		{"empty name", []Param[float32]{ok("")}, def, "parameter 0 has no name"},
		{"duplicate", []Param[float32]{ok("w"), ok("w")}, def, `"w" appears twice`},
		{"length mismatch", []Param[float32]{{Name: "b", Value: make([]float32, 3), Grad: make([]float32, 2)}}, def,
			`"b" has 3 values but 2 gradients`},
		{"Beta1 = 1", []Param[float32]{ok("w")}, withCfg(func(c *AdamConfig) { c.Beta1 = 1 }), "Beta1"},
		{"Beta2 < 0", []Param[float32]{ok("w")}, withCfg(func(c *AdamConfig) { c.Beta2 = -0.1 }), "Beta2"},
		{"Beta2 NaN", []Param[float32]{ok("w")}, withCfg(func(c *AdamConfig) { c.Beta2 = math.NaN() }), "Beta2"},
		{"Eps = 0", []Param[float32]{ok("w")}, withCfg(func(c *AdamConfig) { c.Eps = 0 }), "Eps"},
		{"negative decay", []Param[float32]{ok("w")}, withCfg(func(c *AdamConfig) { c.WeightDecay = -1 }), "WeightDecay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewAdam(tt.params, tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestAdamStepRejectsBadLearningRate(t *testing.T) {
	p := Param[float64]{Name: "w", Value: []float64{1}, Grad: []float64{1}}
	a, err := NewAdam([]Param[float64]{p}, DefaultAdamConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, lr := range []float64{-1e-3, math.NaN(), math.Inf(1)} {
		if err := a.Step(lr); err == nil || !strings.Contains(err.Error(), "learning rate") {
			t.Errorf("Step(%v): error %v, want one about the learning rate", lr, err)
		}
	}
	if a.Steps() != 0 || p.Value[0] != 1 {
		t.Errorf("rejected steps changed the optimizer: %d steps, value %v", a.Steps(), p.Value[0])
	}
}

func BenchmarkAdamStep(b *testing.B) {
	const n = 1 << 20
	p := Param[float32]{Name: "w", Value: make([]float32, n), Grad: make([]float32, n), Decay: true}
	for i := range p.Grad {
		p.Grad[i] = float32(i%7) - 3
	}
	a, err := NewAdam([]Param[float32]{p}, AdamConfig{Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, WeightDecay: 0.1})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(4 * n)
	for b.Loop() {
		_ = a.Step(1e-3)
	}
}

// A parameter with LRScale s moves s times as far as the same parameter without, step by
// step (its weight decay is not scaled); a bad scale is refused by name.
func TestAdamLRScale(t *testing.T) {
	run := func(scale float64) []float64 {
		p := []Param[float64]{{Name: "w", Value: []float64{1, -2}, Grad: make([]float64, 2), LRScale: scale}}
		a, err := NewAdam(p, DefaultAdamConfig())
		if err != nil {
			t.Fatal(err)
		}
		var moves []float64
		for step := range 3 {
			p[0].Grad[0], p[0].Grad[1] = 0.3*float64(step+1), -0.1
			before := p[0].Value[0]
			if err := a.Step(1e-3); err != nil {
				t.Fatal(err)
			}
			moves = append(moves, p[0].Value[0]-before)
		}
		return moves
	}
	plain, scaled := run(0), run(10)
	for i := range plain {
		if math.Abs(scaled[i]-10*plain[i]) > 1e-12 {
			t.Errorf("step %d: scaled move %v, want 10 x %v", i, scaled[i], plain[i])
		}
	}
	if _, err := NewAdam([]Param[float64]{{Name: "w", Value: []float64{1}, Grad: []float64{0}, LRScale: math.NaN()}}, DefaultAdamConfig()); err == nil || !strings.Contains(err.Error(), `"w"`) {
		t.Errorf("a NaN scale: %v", err)
	}
}

// TestAdamCutAcrossCoresMatchesOneCore: with parameters large enough for the update to be
// cut across the cores, at chunk edges inside parameters of mixed decay and learning-rate
// scales, every value and moment equals that of the same steps on one core, bit for bit.
func TestAdamCutAcrossCoresMatchesOneCore(t *testing.T) {
	sizes := []int{70001, 5, 90003, 3, 40000}
	run := func(procs int) []Param[float32] {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		rng := rand.New(rand.NewPCG(7, 7))
		var params []Param[float32]
		for i, n := range sizes {
			p := Param[float32]{Name: fmt.Sprint("p", i), Value: make([]float32, n), Grad: make([]float32, n), Decay: i%2 == 0, LRScale: float64(i % 3)}
			for j := range p.Value {
				p.Value[j] = float32(rng.NormFloat64())
			}
			params = append(params, p)
		}
		a, err := NewAdam(params, AdamConfig{Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, WeightDecay: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		if procs > 1 && kernel.Workers(a.offset[len(a.elem)], adamCost) < 2 {
			t.Fatal("the update is not cut: the test would not see the chunks")
		}
		for _, lr := range []float64{1e-2, 3e-3, 1e-3} {
			fillGrads(rng, params)
			if err := a.Step(lr); err != nil {
				t.Fatal(err)
			}
		}
		for i := range params {
			params[i].Value = append(params[i].Value, a.m[i]...)
			params[i].Value = append(params[i].Value, a.v[i]...)
		}
		return params
	}
	one, many := run(1), run(4)
	for i := range one {
		for j, v := range one[i].Value {
			if math.Float32bits(v) != math.Float32bits(many[i].Value[j]) {
				t.Fatalf("%s: element %d of value, m, v is %v cut across cores, %v on one", one[i].Name, j, many[i].Value[j], v)
			}
		}
	}
}
