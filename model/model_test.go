package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"lipformer/ops"
	"lipformer/spec"
)

// fill writes a random batch into a program.
func fill(p *Program, seed uint64, vocab int) {
	r := rand.New(rand.NewPCG(seed, 3))
	for i := range p.Inputs {
		p.Inputs[i] = r.IntN(vocab)
		p.Targets[i] = r.IntN(vocab)
	}
	p.Targets[len(p.Targets)-1] = -1 // an unscored padding target
}

func mustProgram(t *testing.T, m *Model, mode Mode, batch int) *Program {
	t.Helper()
	p, err := m.NewProgram(mode, batch)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// mustLoss is the loss of p's last run.
func mustLoss(t *testing.T, p *Program) float64 {
	t.Helper()
	loss, err := p.Loss()
	if err != nil {
		t.Fatal(err)
	}
	return loss
}

// mustLogits is row r of the logits of p's last run.
func mustLogits(t *testing.T, p *Program, r int) []float64 {
	t.Helper()
	l, err := p.Logits(r)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestTrainAndEvalProgramsAgree(t *testing.T) {
	for _, v := range variants() {
		arch := v.name
		m, err := New(v.cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		tr, ev := mustProgram(t, m, Train, 3), mustProgram(t, m, Eval, 3)
		fill(tr, 5, 7)
		copy(ev.Inputs, tr.Inputs)
		copy(ev.Targets, tr.Targets)
		if err := tr.Run(); err != nil {
			t.Fatal(err)
		}
		if err := ev.Run(); err != nil {
			t.Fatal(err)
		}
		if a, b := mustLoss(t, tr), mustLoss(t, ev); math.Abs(a-b) > 1e-12 || math.IsNaN(a) {
			t.Errorf("%s: train loss %v, eval loss %v", arch, a, b)
		}
	}
}

// TestModelGradient compares the training program's gradient of every parameter tensor
// (a few elements each) with central differences of the evaluation program's loss.
func TestModelGradient(t *testing.T) {
	for _, v := range variants() {
		t.Run(v.name, func(t *testing.T) {
			m, err := New(v.cfg, 2)
			if err != nil {
				t.Fatal(err)
			}
			tr, ev := mustProgram(t, m, Train, 2), mustProgram(t, m, Eval, 2)
			fill(tr, 9, 7)
			copy(ev.Inputs, tr.Inputs)
			copy(ev.Targets, tr.Targets)
			if err := tr.Run(); err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(4, 4))
			for i, p := range tr.Params() {
				g, err := tr.Grad(i)
				if err != nil {
					t.Fatal(err)
				}
				grad := g.Data().([]float64)
				w := p.Value.Data().([]float64)
				for k := 0; k < 3; k++ {
					j := r.IntN(len(w))
					num := centralDiff(t, ev, w, j, 1e-5)
					if d := math.Abs(num - grad[j]); d > 1e-6*math.Max(1e-3, math.Abs(num)) {
						t.Errorf("%s[%d]: gradient %.10g, finite difference %.10g", p.Name, j, grad[j], num)
					}
				}
			}
		})
	}
}

// centralDiff is the central difference of the program's loss in w[j].
func centralDiff(t *testing.T, p *Program, w []float64, j int, h float64) float64 {
	t.Helper()
	loss := func(v float64) float64 {
		w[j] = v
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		return mustLoss(t, p)
	}
	orig := w[j]
	d := (loss(orig+h) - loss(orig-h)) / (2 * h)
	w[j] = orig
	return d
}

func TestSampleLogitsGiveTheEvalLoss(t *testing.T) {
	m, err := New(tiny("l2"), 3)
	if err != nil {
		t.Fatal(err)
	}
	sp, ev := mustProgram(t, m, Sample, 1), mustProgram(t, m, Eval, 1)
	fill(ev, 1, 7)
	copy(sp.Inputs, ev.Inputs)
	if err := ev.Run(); err != nil {
		t.Fatal(err)
	}
	if err := sp.Run(); err != nil {
		t.Fatal(err)
	}
	var sum float64
	var n int
	for r, tg := range ev.Targets {
		if tg < 0 {
			continue
		}
		l := mustLogits(t, sp, r)
		mx := l[0]
		for _, v := range l {
			mx = math.Max(mx, v)
		}
		var z float64
		for _, v := range l {
			z += math.Exp(v - mx)
		}
		sum += mx + math.Log(z) - l[tg]
		n++
	}
	if got, want := sum/float64(n), mustLoss(t, ev); math.Abs(got-want) > 1e-12 {
		t.Errorf("loss from sampling logits %v, eval loss %v", got, want)
	}
}

func TestInitialLossIsNearUniform(t *testing.T) {
	cfg := tiny("dp")
	cfg.Std, cfg.Vocab = 0.02, 50
	m, err := New(cfg, 4)
	if err != nil {
		t.Fatal(err)
	}
	ev := mustProgram(t, m, Eval, 4)
	fill(ev, 2, 50)
	if err := ev.Run(); err != nil {
		t.Fatal(err)
	}
	if got := mustLoss(t, ev); math.Abs(got-math.Log(50)) > 0.05 {
		t.Errorf("initial loss %v, want about ln 50 = %v", got, math.Log(50))
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	for _, c := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Arch = 0 }, "arch"},
		{func(c *Config) { c.Heads = 3 }, "heads"},
		{func(c *Config) { c.Vocab = 300 }, "vocab"},
		{func(c *Config) { c.Norm = 0 }, "norm"},
		{func(c *Config) { c.Dropout = 1 }, "dropout"},
		{func(c *Config) { c.Dtype = 7 }, "dtype"},
		{func(c *Config) { c.MLPGain = 2 }, "mlp_gain"},
		{func(c *Config) { c.Arch, c.MLPGain = spec.InvertibleL2, -1 }, "mlp_gain"},
		{func(c *Config) { c.Arch, c.MLPGain = spec.InvertibleL2, math.Inf(1) }, "mlp_gain"},
		{func(c *Config) { c.MLPBlocks = 2 }, "mlp_blocks"},
		{func(c *Config) { c.Arch, c.MLPBlocks = spec.InvertibleL2, -1 }, "mlp_blocks"},
		{func(c *Config) { c.BallRadius = 0.5 }, "ball_radius"},
		{func(c *Config) { c.Norm, c.BallRadius = spec.BallPre, -1 }, "ball_radius"},
		{func(c *Config) { c.Arch, c.Norm, c.L2Bound = spec.InvertibleL2, spec.BallPre, ops.BoundKim }, "token2"},
		{func(c *Config) { c.EmbedStd = math.NaN() }, "embed_std"},
	} {
		cfg := tiny("l2")
		c.mod(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %q", cfg, err, c.want)
		}
	}
}

func TestTiedHeadIsTheTokenTable(t *testing.T) {
	cfg := tiny("dp")
	cfg.Tie = true
	m, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.Head != nil || !m.Tok.W.Decay {
		t.Fatalf("tied model: head %v, token table decayed %v", m.Head, m.Tok.W.Decay)
	}
	for _, p := range m.Params() {
		if strings.HasPrefix(p.Name, "head") {
			t.Errorf("tied model has a head parameter %s", p.Name)
		}
	}
	untied, err := New(tiny("dp"), 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := untied.NumParams()-m.NumParams(), cfg.Width*cfg.Vocab; got != want {
		t.Errorf("tying saves %d parameters, want %d", got, want)
	}
}

// TestWholeTensorGradientsAtWideWidths checks the gradient of every parameter tensor as a
// whole, at widths that are multiples of 128 as in training: the central difference of the
// loss along a random unit direction of the tensor must equal the gradient's inner product
// with it, and no two parameters may share a gradient buffer. TestModelGradient's width 8
// cannot show what this catches: Gorgonia's slice op hashes its bounds as single bytes,
// so the slices that G.Concat's gradient made for columns 0:128 and 256:384 were merged
// into one node, and while the packed projection was G.Concat(wq, wk, wv) every wv
// received wq's gradient at width 128 (and wq's, wk's and wv's were one at width 256; for
// tied L2, G.Concat(wq, weff) merged at width 256).
func TestWholeTensorGradientsAtWideWidths(t *testing.T) {
	for _, c := range []struct {
		arch  string
		width int
	}{{"dp", 128}, {"l2-untied", 128}, {"l2", 256}} {
		t.Run(fmt.Sprintf("%s-%d", c.arch, c.width), func(t *testing.T) {
			cfg := Config{Arch: mustArch(c.arch), Layers: 2, Heads: 4, Width: c.width, Context: 8, Vocab: 20, Norm: spec.PreLN, LipC: 0.9, Dtype: spec.Float64, Std: 0.1}
			m, err := New(cfg, 5)
			if err != nil {
				t.Fatal(err)
			}
			const batch = 4 // each position appears once per sequence
			tr, ev := mustProgram(t, m, Train, batch), mustProgram(t, m, Eval, batch)
			fill(tr, 11, cfg.Vocab)
			copy(ev.Inputs, tr.Inputs)
			copy(ev.Targets, tr.Targets)
			if err := tr.Run(); err != nil {
				t.Fatal(err)
			}
			owner := map[*float64]string{}
			r := rand.New(rand.NewPCG(6, 6))
			for i, p := range tr.Params() {
				g, err := tr.Grad(i)
				if err != nil {
					t.Fatal(err)
				}
				grad := g.Data().([]float64)
				w := p.Value.Data().([]float64)
				if len(grad) != len(w) {
					t.Fatalf("%s: gradient of %d elements, want %d", p.Name, len(grad), len(w))
				}
				if o, ok := owner[&grad[0]]; ok {
					t.Errorf("%s and %s share a gradient buffer", o, p.Name)
				}
				owner[&grad[0]] = p.Name
				dir := make([]float64, len(w))
				var norm float64
				for j := range dir {
					dir[j] = r.NormFloat64()
					norm += dir[j] * dir[j]
				}
				var dot float64
				for j := range dir {
					dir[j] /= math.Sqrt(norm)
					dot += grad[j] * dir[j]
				}
				// Observed errors are below 2e-9; a wrong block is off by about 1e-3 or more.
				num := directionalDiff(t, ev, w, dir, 1e-4)
				if d := math.Abs(num - dot); d > 1e-7+1e-6*math.Abs(num) {
					t.Errorf("%s: derivative along a random direction: gradient %.10g, finite difference %.10g", p.Name, dot, num)
				}
			}
		})
	}
}

// directionalDiff is the central difference of the program's loss at w along dir.
func directionalDiff(t *testing.T, p *Program, w, dir []float64, h float64) float64 {
	t.Helper()
	orig := append([]float64(nil), w...)
	loss := func(s float64) float64 {
		for j := range w {
			w[j] = orig[j] + s*dir[j]
		}
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		return mustLoss(t, p)
	}
	d := (loss(h) - loss(-h)) / (2 * h)
	copy(w, orig)
	return d
}

// The certified recipe sets the token2 bound, temperatures and position biases of the
// certified architectures only, and an MLP gain and MLP sub-blocks of invertible-l2 only
// where none are set.
func TestWithCertifiedRecipe(t *testing.T) {
	for _, c := range []struct {
		arch string
		gain float64
		want Config
	}{
		{"contractive-l2", 0, Config{L2Bound: ops.BoundTok2, L2Temp: true, L2PosBias: true}},
		{"invertible-l2", 0, Config{L2Bound: ops.BoundTok2, L2Temp: true, L2PosBias: true, MLPGain: spec.RecipeMLPGain}},
		{"invertible-l2", 3, Config{L2Bound: ops.BoundTok2, L2Temp: true, L2PosBias: true, MLPGain: 3}},
		{"l2", 0, Config{}},
		{"dp", 0, Config{}},
		{"invertible-dp", 0, Config{}},
	} {
		cfg := tiny(c.arch)
		cfg.MLPGain = c.gain
		got := cfg.WithCertifiedRecipe()
		if got.L2Bound != c.want.L2Bound || got.L2Temp != c.want.L2Temp || got.L2PosBias != c.want.L2PosBias || got.MLPGain != c.want.MLPGain {
			t.Errorf("%s gain %g: %+v", c.arch, c.gain, got)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("%s gain %g: %v", c.arch, c.gain, err)
		}
	}
	// invertible-l2 takes RecipeMLPBlocks MLPs sharing 4D unless a width, a count or a K is set
	for _, c := range []struct {
		hidden, mlps int
		k            float64
		want, width  int
	}{{0, 0, 0, spec.RecipeMLPBlocks, 32 / spec.RecipeMLPBlocks}, {16, 0, 0, 0, 16}, {0, 1, 0, 1, 32}, {0, 2, 0, 2, 16}, {0, 0, 10, 0, 32}} {
		cfg := tiny("invertible-l2")
		cfg.Hidden, cfg.MLPBlocks, cfg.LipK = c.hidden, c.mlps, c.k
		if c.k > 0 {
			cfg.Norm = spec.NoLN
		}
		got := cfg.WithCertifiedRecipe()
		if got.MLPBlocks != c.want || got.HiddenWidth() != c.width {
			t.Errorf("hidden %d, mlp_blocks %d, lip_k %g: recipe has %d MLPs of width %d, want %d of width %d",
				c.hidden, c.mlps, c.k, got.MLPBlocks, got.HiddenWidth(), c.want, c.width)
		}
	}
}

func TestUsesNamesWhatEachArchitectureReads(t *testing.T) {
	want := map[string][]string{ // the keys Uses rejects
		"dp":             {"balance_l2", "l2_bound", "l2_temp", "l2_pos_bias", "lip_c", "mlp_gain", "mlp_blocks"},
		"l2":             {"l2_bound", "lip_c", "mlp_gain", "mlp_blocks"},
		"l2-untied":      {"balance_l2", "l2_bound", "l2_temp", "l2_pos_bias", "lip_c", "mlp_gain", "mlp_blocks"},
		"contractive-l2": {"mlp_gain", "mlp_blocks"},
		"invertible-l2":  nil,
		"invertible-dp":  {"balance_l2", "l2_bound", "l2_temp", "l2_pos_bias"},
	}
	keys := []string{"balance_l2", "l2_bound", "l2_temp", "l2_pos_bias", "lip_c", "mlp_gain", "mlp_blocks", "layers", "ctx", "lr"}
	for _, arch := range archNames() {
		cfg := tiny(arch)
		var got []string
		for _, k := range keys {
			if !cfg.Uses(k) {
				got = append(got, k)
			}
		}
		if !slices.Equal(got, want[arch]) {
			t.Errorf("%s: Uses rejects %v, want %v", arch, got, want[arch])
		}
		ball := cfg
		ball.Norm = spec.BallPre
		if cfg.Uses("ball_radius") || !ball.Uses("ball_radius") {
			t.Errorf("%s: Uses of ball_radius is %v with norm %s and %v with norm ball, want false and true", arch, cfg.Uses("ball_radius"), cfg.Norm, ball.Uses("ball_radius"))
		}
		// Validate refuses the flags an architecture does not read.
		for k, set := range map[string]func(*Config){
			"l2_temp":     func(c *Config) { c.L2Temp = true },
			"l2_pos_bias": func(c *Config) { c.L2PosBias, c.L2Bound = true, ops.BoundTok2 },
			"mlp_gain":    func(c *Config) { c.MLPGain = 8 },
			"mlp_blocks":  func(c *Config) { c.MLPBlocks = 2 },
		} {
			c := tiny(arch)
			set(&c)
			if err := c.Validate(); (err != nil) == cfg.Uses(k) {
				t.Errorf("%s with %s set: Validate %v, but Uses says %v", arch, k, err, cfg.Uses(k))
			}
		}
	}
}
