package model

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lipformer/safetensors"
	"lipformer/spec"
)

// TestCheckpointKeepsPowerIterationVectors: the u and v of every spectral normalisation
// are saved and restored exactly, so a loaded model computes the same function; a
// checkpoint without them is refused, naming the missing vector.
func TestCheckpointKeepsPowerIterationVectors(t *testing.T) {
	for _, arch := range []string{"invertible-l2", "invertible-dp"} {
		m, err := New(tiny(arch), 7)
		if err != nil {
			t.Fatal(err)
		}
		bufs := m.Buffers()
		if len(bufs) == 0 {
			t.Fatalf("%s: no power-iteration vectors", arch)
		}
		for i, b := range bufs { // vectors that a fresh model would not have
			v := b.Value.Data().([]float64)
			v[i%len(v)] += 0.25
		}
		path := filepath.Join(t.TempDir(), "ckpt.safetensors")
		if err := m.Save(path, []byte("abcdefg"), nil, nil); err != nil {
			t.Fatal(err)
		}
		m2, ck, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(ck.Extra) != 0 {
			t.Errorf("%s: buffers came back as extra tensors: %v", arch, ck.Extra)
		}
		for i, b := range m2.Buffers() {
			if b.Name != bufs[i].Name || !slices.Equal(b.Float64s(), bufs[i].Float64s()) {
				t.Fatalf("%s: buffer %s = %v after loading, want %s = %v", arch, b.Name, b.Float64s(), bufs[i].Name, bufs[i].Float64s())
			}
		}
		a, b := mustProgram(t, m, Eval, 2), mustProgram(t, m2, Eval, 2)
		fill(a, 3, 7)
		copy(b.Inputs, a.Inputs)
		copy(b.Targets, a.Targets)
		if err := a.Run(); err != nil {
			t.Fatal(err)
		}
		if err := b.Run(); err != nil {
			t.Fatal(err)
		}
		if la, lb := mustLoss(t, a), mustLoss(t, b); la != lb {
			t.Errorf("%s: loss %v before saving, %v after loading", arch, la, lb)
		}
		ts, meta, err := safetensors.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		kept := slices.DeleteFunc(ts, func(x safetensors.Tensor) bool { return x.Name == bufs[0].Name })
		if err := safetensors.WriteFile(path, kept, meta); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Load(path); err == nil || !strings.Contains(err.Error(), bufs[0].Name) {
			t.Errorf("%s: checkpoint without %s: %v, want an error naming it", arch, bufs[0].Name, err)
		}
	}
}

func TestInvertibleConfig(t *testing.T) {
	m, err := New(tiny("invertible-l2"), 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.Cfg.Norm != spec.NoLN || len(m.Blocks) != 2 || len(m.Invertible()) != 2 {
		t.Errorf("invertible model: norm %v, %d blocks of which %d invertible; want none, 2 and 2", m.Cfg.Norm, len(m.Blocks), len(m.Invertible()))
	}
	for _, c := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.LipC = 1 }, "lip_c"},
		{func(c *Config) { c.LipC = 0 }, "lip_c"},
		{func(c *Config) { c.Norm = spec.PostLN }, "norm post"},
	} {
		cfg := tiny("invertible-dp")
		c.mod(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %q", cfg, err, c.want)
		}
	}
}

// TestWithDtype: a float32 invertible model converted to float64 holds the same values,
// buffers included, and computes the same loss up to float32 rounding.
func TestWithDtype(t *testing.T) {
	cfg := tiny("invertible-l2")
	cfg.Dtype = spec.Float32
	m, err := New(cfg, 4)
	if err != nil {
		t.Fatal(err)
	}
	m64, err := m.WithDtype(spec.Float64)
	if err != nil {
		t.Fatal(err)
	}
	if m64.Cfg.Dtype != spec.Float64 {
		t.Fatalf("dtype %s after conversion", m64.Cfg.Dtype)
	}
	a, b := m.stored(), m64.stored()
	for i := range a {
		av, bv := a[i].value.Data().([]float32), b[i].value.Data().([]float64)
		for j := range av {
			if float64(av[j]) != bv[j] {
				t.Fatalf("%s[%d]: %v became %v", a[i].name, j, av[j], bv[j])
			}
		}
	}
	p32, p64 := mustProgram(t, m, Eval, 2), mustProgram(t, m64, Eval, 2)
	fill(p32, 1, 7)
	copy(p64.Inputs, p32.Inputs)
	copy(p64.Targets, p32.Targets)
	if err := p32.Run(); err != nil {
		t.Fatal(err)
	}
	if err := p64.Run(); err != nil {
		t.Fatal(err)
	}
	if l32, l64 := mustLoss(t, p32), mustLoss(t, p64); l32-l64 > 1e-5 || l32-l64 < -1e-5 {
		t.Errorf("loss %v in float32, %v in float64", l32, l64)
	}
}

// TestPowerIterateMatchesOneByOne: PowerIterate, which runs the estimates on several
// goroutines, leaves every power-iteration vector as running each estimate alone, one
// after another, does, bit for bit (the model's attention bounds and its spectral
// normalisations each have their own vectors and scratch). CI runs it under -race.
func TestPowerIterateMatchesOneByOne(t *testing.T) {
	cfg := tiny("invertible-l2").WithCertifiedRecipe()
	par, err := New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	par.PowerIterate(5)
	for _, a := range seq.Attentions() {
		a.PowerIterate(5)
	}
	for _, sn := range seq.SpectralNorms() {
		sn.Iterate(5)
	}
	pb, sb := par.Buffers(), seq.Buffers()
	if len(pb) == 0 || len(pb) != len(sb) {
		t.Fatalf("%d and %d buffers", len(pb), len(sb))
	}
	moved := false
	fresh, err := New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pb {
		p, s, f := pb[i].Float64s(), sb[i].Float64s(), fresh.Buffers()[i].Float64s()
		if !slices.Equal(p, s) {
			t.Errorf("%s: %v in parallel, %v one by one", pb[i].Name, p[:2], s[:2])
		}
		moved = moved || !slices.Equal(p, f)
	}
	if !moved {
		t.Error("PowerIterate moved no vector")
	}
}
